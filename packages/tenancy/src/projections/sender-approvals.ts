import type { Projection } from "@dmarc-ledger/projection-engine";
import type { TenancySchema } from "../schema.js";

/** The approvals in force per domain; a removed domain's go with it (a next owner starts afresh). */
export const senderApprovalsProjection: Projection<TenancySchema> = {
  name: "sender_approvals",
  tables: ["sender_approval"],
  handles: new Set(["SenderApprovalSet", "DomainRemoved"]),
  async apply(trx, events) {
    for (const event of events) {
      if (event.type === "DomainRemoved") {
        await trx.deleteFrom("sender_approval").where("domain", "=", event.data.domain).execute();
        continue;
      }
      if (event.type !== "SenderApprovalSet") continue;
      const { domain, tenantId, service, range, approved } = event.data;
      const kind = service !== null ? "service" : "range";
      const sender = service ?? range ?? "";
      if (approved === null) {
        await trx
          .deleteFrom("sender_approval")
          .where("domain", "=", domain)
          .where("kind", "=", kind)
          .where("sender", "=", sender)
          .execute();
      } else {
        await trx
          .insertInto("sender_approval")
          .values({ domain, tenant_id: tenantId, kind, sender, approved })
          .onConflict((oc) =>
            oc.columns(["domain", "kind", "sender"]).doUpdateSet({ approved, tenant_id: tenantId }),
          )
          .execute();
      }
    }
  },
};
