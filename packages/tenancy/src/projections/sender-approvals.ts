import type { Projection } from "@dmarc-ledger/projection-engine";
import type { TenancySchema } from "../schema.js";

/** Rows per insert of a decision's members: 3 parameters each, far below PostgreSQL's 65,535. */
const membersPerInsert = 5_000;

/**
 * The approvals in force per domain, with the addresses each decided service grouped when it was
 * decided; a removed domain's go with it (a next owner starts afresh).
 */
export const senderApprovalsProjection: Projection<TenancySchema> = {
  name: "sender_approvals",
  tables: ["sender_approval", "sender_approval_member"],
  handles: new Set(["SenderApprovalSet", "DomainRemoved"]),
  async apply(trx, events) {
    for (const event of events) {
      if (event.type === "DomainRemoved") {
        await trx.deleteFrom("sender_approval").where("domain", "=", event.data.domain).execute();
        await trx.deleteFrom("sender_approval_member").where("domain", "=", event.data.domain).execute();
        continue;
      }
      if (event.type !== "SenderApprovalSet") continue;
      const { domain, tenantId, service, range, approved, members } = event.data;
      const kind = service !== null ? "service" : "range";
      const sender = service ?? range ?? "";
      if (service !== null) {
        await trx
          .deleteFrom("sender_approval_member")
          .where("domain", "=", domain)
          .where("service", "=", service)
          .execute();
      }
      if (approved === null) {
        await trx
          .deleteFrom("sender_approval")
          .where("domain", "=", domain)
          .where("kind", "=", kind)
          .where("sender", "=", sender)
          .execute();
        continue;
      }
      const membersCount = service !== null && members !== null ? members.count : null;
      await trx
        .insertInto("sender_approval")
        .values({ domain, tenant_id: tenantId, kind, sender, approved, members_count: membersCount })
        .onConflict((oc) =>
          oc
            .columns(["domain", "kind", "sender"])
            .doUpdateSet({ approved, tenant_id: tenantId, members_count: membersCount }),
        )
        .execute();
      if (service === null || members === null) continue;
      for (let at = 0; at < members.addresses.length; at += membersPerInsert) {
        const rows = members.addresses
          .slice(at, at + membersPerInsert)
          .map((sourceIp) => ({ domain, service, source_ip: sourceIp }));
        await trx
          .insertInto("sender_approval_member")
          .values(rows)
          .onConflict((oc) => oc.doNothing())
          .execute();
      }
    }
  },
};
