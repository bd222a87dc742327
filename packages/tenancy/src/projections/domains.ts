import type { Projection } from "@dmarc-ledger/projection-engine";
import type { TenancySchema } from "../schema.js";

/** The tenant's domains and the group each is in now. */
export const domainsProjection: Projection<TenancySchema> = {
  name: "domains",
  tables: ["domain"],
  handles: new Set(["DomainAdded", "DomainRemoved", "DomainGroupSet"]),
  async apply(trx, events) {
    for (const event of events) {
      switch (event.type) {
        case "DomainAdded":
          await trx
            .insertInto("domain")
            .values({
              domain: event.data.domain,
              tenant_id: event.data.tenantId,
              group_name: null,
              added_at: event.recordedAt,
            })
            .execute();
          break;
        case "DomainRemoved":
          // Its reports stop counting for the tenant; the audit trail keeps the domain's history.
          await trx.deleteFrom("domain").where("domain", "=", event.data.domain).execute();
          break;
        case "DomainGroupSet":
          await trx
            .updateTable("domain")
            .set({ group_name: event.data.group })
            .where("domain", "=", event.data.domain)
            .execute();
          break;
      }
    }
  },
};
