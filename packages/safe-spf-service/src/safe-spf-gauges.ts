import { type Kysely, sql } from "kysely";
import { Gauge, type Registry } from "prom-client";
import type { SafeSpfSchema } from "./schema.js";

/** How many domains are in each Safe SPF status (pending, computed, failed), over all tenants. */
export async function safeSpfStatusCounts(db: Kysely<SafeSpfSchema>): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom("safe_spf")
    .select(["status", sql<string>`count(*)::text`.as("count")])
    .groupBy("status")
    .execute();
  return new Map(rows.map((row) => [row.status, Number(row.count)]));
}

/**
 * The domains by Safe SPF status, read when scraped; served by the API, `start` and the
 * projector beside the projections' lag. A subpath of its own
 * (`@dmarc-ledger/safe-spf-service/metrics`), so that the package's index does not load prom-client.
 */
export function registerSafeSpfGauges(registry: Registry, db: Kysely<SafeSpfSchema>): void {
  new Gauge({
    name: "safe_spf_domains",
    help: "Domains by Safe SPF status (pending, computed, failed).",
    labelNames: ["status"] as const,
    registers: [registry],
    async collect() {
      const counts = await safeSpfStatusCounts(db);
      this.reset();
      for (const status of ["pending", "computed", "failed"]) this.set({ status }, counts.get(status) ?? 0);
      for (const [status, count] of counts) this.set({ status }, count);
    },
  });
}
