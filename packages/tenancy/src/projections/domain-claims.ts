import type { Projection } from "@dmarc-ledger/projection-engine";
import type { TenancySchema } from "../schema.js";

/** The claims in force in the domain trees (see DomainClaimTable). */
export const domainClaimsProjection: Projection<TenancySchema> = {
  name: "domain-claims",
  tables: ["domain_claim"],
  handles: new Set(["DomainReserved", "DomainReleased"]),
  async apply(trx, events) {
    for (const event of events) {
      switch (event.type) {
        case "DomainReserved":
          await trx
            .insertInto("domain_claim")
            .values({ domain: event.data.domain, tenant_id: event.data.tenantId })
            .onConflict((oc) => oc.column("domain").doUpdateSet({ tenant_id: event.data.tenantId }))
            .execute();
          break;
        case "DomainReleased":
          await trx
            .deleteFrom("domain_claim")
            .where("domain", "=", event.data.domain)
            .where("tenant_id", "=", event.data.tenantId)
            .execute();
          break;
      }
    }
  },
};
