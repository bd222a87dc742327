import { type AnySchema, migrateToLatest, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import {
  createPostgresEventStore,
  type EventStore,
  eventStoreMigrations,
  type RecordedEvent,
} from "@dmarc-ledger/event-store";
import { streams } from "@dmarc-ledger/events";
import {
  catchUp,
  type Projection,
  projectionEngineMigrations,
  type RunningProjector,
  startProjector,
} from "@dmarc-ledger/projection-engine";
import type { SpfResolver } from "@dmarc-ledger/safe-spf";
import { addDomain, createTenant, tenancyMigrations, tenancyProjections } from "@dmarc-ledger/tenancy";
import type { Kysely } from "kysely";
import { computeSafeSpf } from "../src/compute-safe-spf.js";
import { safeSpfMigrations } from "../src/migrations/index.js";
import { safeSpfProjections } from "../src/safe-spf-state-projection.js";
import { submitOriginalSpf } from "../src/submit-original.js";

/** What these tests read: the domains and their history (tenancy's) and Safe SPF's own tables. */
export const projections: readonly Projection[] = [...tenancyProjections, ...safeSpfProjections];

/**
 * The parts of a runtime these tests use: the event store and the tables of the projections
 * above, on a fresh PostgreSQL database, with a projector following it, as in production.
 */
export interface RefreshTestWorld {
  runtime: { store: EventStore; db: Kysely<AnySchema> };
  tenantId: string;
  projector: RunningProjector;
  close(): Promise<void>;
}

export async function openWorld(prefix: string): Promise<RefreshTestWorld> {
  const testDatabase: TestDatabase = await createTestDatabase(prefix);
  const database = await openDatabase({ kind: "postgres", url: testDatabase.url });
  await migrateToLatest(
    database.db,
    eventStoreMigrations,
    projectionEngineMigrations,
    tenancyMigrations,
    safeSpfMigrations,
  );
  const runtime = { store: createPostgresEventStore(database), db: database.withSchema<AnySchema>() };
  const { tenantId } = await createTenant(
    runtime.store,
    { name: "acme", region: "global" },
    { causedBy: "test" },
  );
  const projector = startProjector({ store: runtime.store, db: runtime.db, projections });
  return {
    runtime,
    tenantId,
    projector,
    async close() {
      await projector.stop();
      await runtime.store.close();
      await database.close();
      await testDatabase.drop();
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
  await catchUp({ store, db: world.runtime.db, projections });
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
