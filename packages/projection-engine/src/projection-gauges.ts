import type { AnySchema } from "@dmarc-ledger/db";
import type { EventStore } from "@dmarc-ledger/event-store";
import type { Kysely } from "kysely";
import { Gauge, type Registry } from "prom-client";
import type { Projection } from "./projection.js";
import { projectionLags } from "./projection-lags.js";

/** Lag is counted by reading events; beyond this many the gauge says "at least". */
export const lagCountLimit = 10_000;

/**
 * Each projection's lag in events and in seconds, read when scraped. Any process with the
 * database may serve them: the API, `start`, the projector. A subpath of its own
 * (`@dmarc-ledger/projection-engine/metrics`), so that the engine does not load prom-client.
 */
export function registerProjectionGauges(
  registry: Registry,
  sources: { db: Kysely<AnySchema>; store: EventStore; projections: readonly Projection[] },
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
}
