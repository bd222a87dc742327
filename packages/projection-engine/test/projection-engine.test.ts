/**
 * The engine's promise: a projection applies a batch in the transaction that moves its
 * checkpoint, so a batch delivered twice, a process killed in the middle of one, or two
 * projectors at once never count an event twice or lose one.
 */
import { openDatabase } from "@dmarc-ledger/db";
import type { RecordedEvent } from "@dmarc-ledger/event-store";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import type { Projection } from "../src/projection.js";
import {
  applyBatch,
  catchUp,
  catchUpSideBySide,
  projectionsReached,
  resetProjections,
} from "../src/projection-engine.js";
import {
  allEvents,
  type CountSchema,
  checkpointOf,
  type EngineWorld,
  openEngineWorld,
  regionCounter,
  regionCounts,
  tenantNames,
} from "./support.js";

/** What the counts must be: each TenantCreated once. */
function expectedCounts(events: readonly RecordedEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const event of events) {
    const region = (event.data as { region: string }).region;
    counts[region] = (counts[region] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

describe("the projection engine", () => {
  let world: EngineWorld | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it("applies a batch once, however often it is delivered", async () => {
    world = await openEngineWorld("dl_engine_once");
    await world.createTenants(7);
    const batch = await allEvents(world.store);
    const projections = [regionCounter()];

    await applyBatch(world.db, projections, batch);
    await applyBatch(world.db, projections, batch);
    await applyBatch(world.db, projections, batch.slice(3));
    expect(await regionCounts(world.db)).toEqual(expectedCounts(batch));
    expect(await checkpointOf(world.db, "tenants_by_region")).toBe(batch.at(-1)!.position);

    // Then what came since, and nothing of what came before.
    await world.createTenants(4);
    await catchUp({ store: world.store, db: world.db, projections, maxBatch: 3 });
    const all = await allEvents(world.store);
    expect(await regionCounts(world.db)).toEqual(expectedCounts(all));
    expect(await projectionsReached(world.db, projections, all.at(-1)!.position)).toBe(true);
  });

  it("keeps nothing of a batch that fails half-way, and applies it whole after", async () => {
    world = await openEngineWorld("dl_engine_crash");
    await world.createTenants(5);
    const failing = regionCounter(async () => {
      throw new Error("killed in the middle of the batch");
    });
    // tenant_names is written first, in the same transaction: it must not keep its rows either.
    await expect(
      catchUp({ store: world.store, db: world.db, projections: [tenantNames, failing] }),
    ).rejects.toThrow("killed in the middle of the batch");
    expect(await world.db.selectFrom("tenant_names").selectAll().execute()).toEqual([]);
    expect(await regionCounts(world.db)).toEqual({});
    expect(await checkpointOf(world.db, "tenant_names")).toBeNull();

    const projections = [tenantNames, regionCounter()];
    await catchUp({ store: world.store, db: world.db, projections });
    const all = await allEvents(world.store);
    expect(await regionCounts(world.db)).toEqual(expectedCounts(all));
    expect(await world.db.selectFrom("tenant_names").select("tenant_id").execute()).toHaveLength(all.length);
  });

  it("serialises two projectors on the checkpoint: the second waits, then applies nothing twice", async () => {
    world = await openEngineWorld("dl_engine_two");
    // Checkpoint rows that exist already: the lock on them, not on a new row, must hold.
    await world.createTenants(3);
    await catchUp({ store: world.store, db: world.db, projections: [regionCounter()] });
    await world.createTenants(6);
    // A second process: its own pool of connections to the same database.
    const other = await openDatabase({ kind: "postgres", url: world.url });
    try {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let firstInBatch!: () => void;
      const inBatch = new Promise<void>((resolve) => {
        firstInBatch = resolve;
      });
      // The first projector stops in the middle of its batch, holding the checkpoint row.
      const first = catchUp({
        store: world.store,
        db: world.db,
        projections: [
          regionCounter(async () => {
            firstInBatch();
            await gate;
          }),
        ],
      });
      await inBatch;
      const second = catchUp({
        store: world.store,
        db: other.withSchema<CountSchema>(),
        projections: [regionCounter()],
      });
      // The second waits on the first's lock (not merely slow): PostgreSQL says so.
      const deadline = Date.now() + 20_000;
      for (;;) {
        const { rows } = await sql<{ waiting: number }>`select count(*)::int as waiting from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`.execute(world.db);
        if (rows[0]!.waiting > 0) break;
        if (Date.now() > deadline) throw new Error("the second projector never waited on the checkpoint");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      release();
      await Promise.all([first, second]);
      expect(await regionCounts(world.db)).toEqual(expectedCounts(await allEvents(world.store)));
    } finally {
      await other.close();
    }
  });

  it("resets a projection's tables and checkpoint, and rebuilds them from the first event", async () => {
    world = await openEngineWorld("dl_engine_reset");
    await world.createTenants(4);
    const projections = [regionCounter(), tenantNames];
    await catchUp({ store: world.store, db: world.db, projections });
    await resetProjections(world.db, [regionCounter()]);
    expect(await regionCounts(world.db)).toEqual({});
    expect(await checkpointOf(world.db, "tenants_by_region")).toBeNull();
    // The other projection is left alone.
    expect(await world.db.selectFrom("tenant_names").select("tenant_id").execute()).toHaveLength(4);

    await catchUp({ store: world.store, db: world.db, projections });
    expect(await regionCounts(world.db)).toEqual(expectedCounts(await allEvents(world.store)));
  });

  describe("side by side (catchUpSideBySide, the import's wait)", () => {
    /** Handles an event type the store never holds: only its checkpoint can move. */
    const idle: Projection = {
      name: "never_applied",
      tables: [],
      handles: new Set(["DomainAdded"]),
      async apply() {
        throw new Error("applied events it does not handle");
      },
    };

    it("applies every event once to every projection, and moves each checkpoint to the last event", async () => {
      world = await openEngineWorld("dl_engine_side");
      await world.createTenants(11);
      const projections = [regionCounter(), tenantNames, idle];
      // Batches of 3: the projections go through 4 batches each, apart.
      await catchUpSideBySide({ store: world.store, db: world.db, projections, maxBatch: 3 });
      let all = await allEvents(world.store);
      expect(await regionCounts(world.db)).toEqual(expectedCounts(all));
      expect(await world.db.selectFrom("tenant_names").select("tenant_id").execute()).toHaveLength(11);
      for (const name of ["tenants_by_region", "tenant_names", "never_applied"])
        expect(await checkpointOf(world.db, name)).toBe(all.at(-1)!.position);

      // Then what came since, beside a catch-up of the other kind: nothing twice.
      await world.createTenants(7);
      await Promise.all([
        catchUpSideBySide({ store: world.store, db: world.db, projections, maxBatch: 2 }),
        catchUp({ store: world.store, db: world.db, projections, maxBatch: 5 }),
      ]);
      all = await allEvents(world.store);
      expect(await regionCounts(world.db)).toEqual(expectedCounts(all));
      expect(await world.db.selectFrom("tenant_names").select("tenant_id").execute()).toHaveLength(18);
      expect(await projectionsReached(world.db, projections, all.at(-1)!.position)).toBe(true);
    });

    it("commits its batches without waiting for the WAL flush; catchUp (the projector's way) waits", async () => {
      world = await openEngineWorld("dl_engine_side_commit");
      await world.createTenants(4);
      const seen: string[] = [];
      // Reads the setting in the transaction that applies the batch.
      const watching: Projection = {
        name: "commit_setting",
        tables: [],
        handles: new Set(["TenantCreated"]),
        async apply(trx) {
          const { rows } = await sql<{ setting: string }>`
            select current_setting('synchronous_commit') as setting`.execute(trx);
          seen.push(rows[0]!.setting);
        },
      };
      await catchUpSideBySide({ store: world.store, db: world.db, projections: [watching], maxBatch: 2 });
      expect(seen).toEqual(["off", "off"]);
      seen.length = 0;
      await world.createTenants(2);
      await catchUp({ store: world.store, db: world.db, projections: [watching] });
      expect(seen).toEqual(["on"]);
      // And the setting ends with each transaction: the pool's connections keep waiting.
      const { rows } = await sql<{
        setting: string;
      }>`select current_setting('synchronous_commit') as setting`.execute(world.db);
      expect(rows[0]!.setting).toBe("on");
    });

    it("throws a projection's failure, keeps what each committed, and a later catch-up counts nothing twice", async () => {
      world = await openEngineWorld("dl_engine_side_fail");
      await world.createTenants(9);
      let batches = 0;
      // The second batch of three fails: the first stays applied, the rest is not begun.
      const failing = regionCounter(async () => {
        if (++batches === 2) throw new Error("killed in the second batch");
      });
      await expect(
        catchUpSideBySide({
          store: world.store,
          db: world.db,
          projections: [tenantNames, failing],
          maxBatch: 3,
        }),
      ).rejects.toThrow("killed in the second batch");
      const all = await allEvents(world.store);
      expect(await checkpointOf(world.db, "tenants_by_region")).toBe(all[2]!.position);
      expect(await regionCounts(world.db)).toEqual(expectedCounts(all.slice(0, 3)));
      // The other projection's batches are its own: it may stand anywhere from the first to the
      // last, with exactly the tenants up to its checkpoint.
      const names = await checkpointOf(world.db, "tenant_names");
      expect(names).not.toBeNull();
      expect(await world.db.selectFrom("tenant_names").select("tenant_id").execute()).toHaveLength(
        all.filter((event) => event.position <= names!).length,
      );

      await catchUpSideBySide({
        store: world.store,
        db: world.db,
        projections: [tenantNames, regionCounter()],
      });
      expect(await regionCounts(world.db)).toEqual(expectedCounts(all));
      expect(await world.db.selectFrom("tenant_names").select("tenant_id").execute()).toHaveLength(9);
    });
  });
});
