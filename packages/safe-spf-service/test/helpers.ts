import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import type { RecordedEvent } from "@dmarc-ledger/event-store";
import { streams } from "@dmarc-ledger/events";
import { allProjections, catchUp, type RunningProjector, startProjector } from "@dmarc-ledger/read-models";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import type { SpfResolver } from "@dmarc-ledger/safe-spf";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { computeSafeSpf } from "../src/compute-safe-spf.js";
import { submitOriginalSpf } from "../src/submit-original.js";

/** A runtime on a fresh PostgreSQL database with a projector following it, as in production. */
export interface RefreshTestWorld {
  runtime: Runtime;
  tenantId: string;
  projector: RunningProjector;
  close(): Promise<void>;
}

export async function openWorld(prefix: string): Promise<RefreshTestWorld> {
  const database: TestDatabase = await createTestDatabase(prefix);
  const runtime = await openRuntime({ DATABASE_URL: database.url }, { eventStoreUrl: null });
  const { tenantId } = await createTenant(
    runtime.store,
    { name: "acme", region: "global" },
    { causedBy: "test" },
  );
  const projector = startProjector({ store: runtime.store, db: runtime.db, projections: allProjections });
  return {
    runtime,
    tenantId,
    projector,
    async close() {
      await projector.stop();
      await runtime.close();
      await database.drop();
    },
  };
}

/** Adds domains with an original each and computes their first records, `parallel` at a time. */
export async function seedDomains(
  world: RefreshTestWorld,
  resolver: SpfResolver,
  domains: { domain: string; original: string }[],
  parallel = 20,
): Promise<void> {
  const { store } = world.runtime;
  let next = 0;
  const worker = async () => {
    while (next < domains.length) {
      const { domain, original } = domains[next++]!;
      await addDomain(store, { tenantId: world.tenantId, domain }, { causedBy: "test" });
      await submitOriginalSpf(store, { tenantId: world.tenantId, domain, original }, { causedBy: "test" });
      const outcome = await computeSafeSpf(store, domain, { resolver, metadata: { causedBy: "test" } });
      if (outcome !== "computed") throw new Error(`seeding ${domain}: ${outcome}`);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  await catchUp({ store, db: world.runtime.db, projections: allProjections });
}

export const safeSpfEvents = async (world: RefreshTestWorld, domain: string): Promise<RecordedEvent[]> =>
  (await world.runtime.store.readStream(streams.domain(domain))).filter((event) =>
    event.type.startsWith("SafeSpf"),
  );

/** Polls until `check` holds; fails with `what` after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
