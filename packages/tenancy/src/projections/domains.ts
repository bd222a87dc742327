import { randomUUID } from "node:crypto";
import type { Projection } from "@dmarc-ledger/projection-engine";
import type { TenancySchema } from "../schema.js";

/**
 * The tenant's domains and the group each is in now, and for each tenant whose domains a batch
 * changed a new random token in domain_set_token, written in the batch's transaction (a reader
 * never sees new domains beside an old token). Random, so that no two databases or rebuilds
 * share one for different domains: a counter would count again from 1 after a rebuild, and an
 * event's position is another event in another database (one process may read several).
 */
export const domainsProjection: Projection<TenancySchema> = {
  name: "domains",
  tables: ["domain", "domain_set_token"],
  handles: new Set(["DomainAdded", "DomainRemoved", "DomainGroupSet"]),
  async apply(trx, events) {
    const changedTenants = new Set<string>();
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
          changedTenants.add(event.data.tenantId);
          break;
        case "DomainRemoved":
          // Its reports stop counting for the tenant; the audit trail keeps the domain's history.
          await trx.deleteFrom("domain").where("domain", "=", event.data.domain).execute();
          changedTenants.add(event.data.tenantId);
          break;
        case "DomainGroupSet":
          await trx
            .updateTable("domain")
            .set({ group_name: event.data.group })
            .where("domain", "=", event.data.domain)
            .execute();
          changedTenants.add(event.data.tenantId);
          break;
      }
    }
    if (changedTenants.size === 0) return;
    await trx
      .insertInto("domain_set_token")
      .values([...changedTenants].map((tenantId) => ({ tenant_id: tenantId, token: randomUUID() })))
      .onConflict((oc) => oc.column("tenant_id").doUpdateSet((eb) => ({ token: eb.ref("excluded.token") })))
      .execute();
  },
};
