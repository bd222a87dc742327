import type { Projection } from "@dmarc-ledger/projection-engine";
import type { SafeSpfSchema } from "./schema.js";

/** The Safe SPF state per domain: GET safe_spf reads it. */
export const safeSpfStateProjection: Projection<SafeSpfSchema> = {
  name: "safe_spf_state",
  tables: ["safe_spf"],
  handles: new Set(["SpfOriginalUpdated", "SafeSpfRecordComputed", "SafeSpfComputationFailed"]),
  async apply(trx, events) {
    for (const event of events) {
      switch (event.type) {
        case "SpfOriginalUpdated":
          await trx
            .insertInto("safe_spf")
            .values({
              domain: event.data.domain,
              tenant_id: event.data.tenantId,
              original: event.data.original,
              status: "pending",
              records: "[]",
              lookups_before: null,
              lookups_after: null,
              warnings: "[]",
              last_computed: null,
              last_error: null,
              retrying: false,
              updated_at: event.recordedAt,
            })
            .onConflict((oc) =>
              oc.column("domain").doUpdateSet({
                original: event.data.original,
                status: "pending",
                last_error: null,
                retrying: false,
                updated_at: event.recordedAt,
              }),
            )
            .execute();
          break;
        case "SafeSpfRecordComputed":
          await trx
            .updateTable("safe_spf")
            .set({
              status: "computed",
              records: JSON.stringify(event.data.records),
              lookups_before: event.data.lookupsBefore,
              lookups_after: event.data.lookupsAfter,
              warnings: JSON.stringify(event.data.warnings),
              last_computed: event.recordedAt,
              min_ttl: event.data.minTtl,
              last_error: null,
              retrying: false,
              updated_at: event.recordedAt,
            })
            .where("domain", "=", event.data.domain)
            .execute();
          break;
        case "SafeSpfComputationFailed":
          await trx
            .updateTable("safe_spf")
            .set({
              status: "failed",
              last_error: `${event.data.code}: ${event.data.message}`,
              retrying: event.data.retrying,
              updated_at: event.recordedAt,
            })
            .where("domain", "=", event.data.domain)
            .execute();
          break;
      }
    }
  },
};

/** Safe SPF's projections (the refresher's schedule is not one: see schema.ts). */
export const safeSpfProjections: readonly Projection<SafeSpfSchema>[] = [safeSpfStateProjection];
