import type { Projection } from "@dmarc-ledger/projection-engine";
import type { TenancySchema } from "../schema.js";

/** Tenants and their API keys (hashes only), for authentication. */
export const tenantsProjection: Projection<TenancySchema> = {
  name: "tenants",
  tables: ["tenant", "api_key"],
  handles: new Set(["TenantCreated", "ApiKeyIssued", "ApiKeyRevoked"]),
  async apply(trx, events) {
    for (const event of events) {
      switch (event.type) {
        case "TenantCreated":
          await trx
            .insertInto("tenant")
            .values({
              tenant_id: event.data.tenantId,
              name: event.data.name,
              region: event.data.region,
              created_at: event.recordedAt,
            })
            .execute();
          break;
        case "ApiKeyIssued":
          await trx
            .insertInto("api_key")
            .values({
              key_id: event.data.keyId,
              tenant_id: event.data.tenantId,
              key_hash: event.data.keyHash,
              key_prefix: event.data.keyPrefix,
              scopes: event.data.scopes.join(","),
              region: event.data.region,
              revoked: false,
            })
            .execute();
          break;
        case "ApiKeyRevoked":
          await trx
            .updateTable("api_key")
            .set({ revoked: true })
            .where("key_id", "=", event.data.keyId)
            .execute();
          break;
      }
    }
  },
};
