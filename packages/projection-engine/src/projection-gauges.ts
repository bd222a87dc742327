import type { EventStore } from "@dmarc-ledger/event-store";
import type { Kysely } from "kysely";
import { Gauge, type Registry } from "prom-client";
import type { Projection } from "./projections/projection.js";
import { projectionLags, safeSpfStatusCounts } from "./queries/operations.js";
import type { ReadModelSchema } from "./schema.js";

/** Lag is counted by reading events; beyond this many the gauge says "at least". */
export const lagCountLimit = 10_000;

/**
 * The read models' gauges, read when scraped: each projection's lag in events and in seconds,
 * and the domains by Safe SPF status. Any process with the database may serve them: the API,
 * `start`, the projector.
 */
export function registerReadModelGauges(
  registry: Registry,
  sources: { db: Kysely<ReadModelSchema>; store: EventStore; projections: readonly Projection[] },
): void {
  // Both lag gauges come from one measurement per scrape.
  let pending: Promise<Awaited<ReturnType<typeof projectionLags>>> | null = null;
  const measureLags = () => {
    pending ??= projectionLags(sources.db, sources.store, sources.projections, lagCountLimit).finally(() => {
      pending = null;
    });
    return pending;
  };
  new Gauge({
    name: "projection_lag_events",
    help: `Events in the store that a projection has not applied (counted up to ${lagCountLimit}).`,
    labelNames: ["projection"] as const,
    registers: [registry],
    async collect() {
      for (const lag of await measureLags()) this.set({ projection: lag.projection }, lag.events);
    },
  });
  new Gauge({
    name: "projection_lag_seconds",
    help: "Age of the oldest event a projection has not applied; 0 when caught up.",
    labelNames: ["projection"] as const,
    registers: [registry],
    async collect() {
      for (const lag of await measureLags()) this.set({ projection: lag.projection }, lag.seconds);
    },
  });
  new Gauge({
    name: "safe_spf_domains",
    help: "Domains by Safe SPF status (pending, computed, failed).",
    labelNames: ["status"] as const,
    registers: [registry],
    async collect() {
      const counts = await safeSpfStatusCounts(sources.db);
      this.reset();
      for (const status of ["pending", "computed", "failed"]) this.set({ status }, counts.get(status) ?? 0);
      for (const [status, count] of counts) this.set({ status }, count);
    },
  });
}
