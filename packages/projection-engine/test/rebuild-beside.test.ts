/**
 * Replay rebuilds projections beside the live tables and swaps them in: readers answer from the
 * old tables until the swap, the new ones keep the live ones' constraints and indexes, and events
 * a live projector applies meanwhile are neither lost nor counted twice.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catchUp, startProjector } from "../src/projection-engine.js";
import { rebuildBeside } from "../src/rebuild-beside.js";
import {
  allEvents,
  checkpointOf,
  type EngineWorld,
  openEngineWorld,
  regionCounter,
  regionCounts,
  tenantNames,
} from "./support.js";

describe("rebuildBeside", () => {
  let world: EngineWorld;
  beforeAll(async () => {
    world = await openEngineWorld("dl_engine_rebuild");
  });
  afterAll(async () => world?.close());

  it("swaps in tables rebuilt from the events while a live projector goes on", async () => {
    await world.createTenants(30);
    const projections = [regionCounter(), tenantNames];
    await catchUp({ store: world.store, db: world.db, projections });
    // A bug (fixed since) left a wrong count in the live table.
    await world.db
      .updateTable("tenants_by_region")
      .set({ tenants: 999 })
      .where("region", "=", "global")
      .execute();

    const live = startProjector({ store: world.store, db: world.db, projections });
    const seenWhileRebuilding: number[] = [];
    // The rebuild's own projection objects (same names): in its first batch, before any swap,
    // it looks at the live table, and new events come that the live projector applies meanwhile.
    const rebuilding = [
      regionCounter(async () => {
        if (seenWhileRebuilding.length > 0) return;
        seenWhileRebuilding.push((await regionCounts(world.db)).global ?? 0);
        await world.createTenants(5);
      }),
      tenantNames,
    ];
    try {
      await rebuildBeside({
        store: world.store,
        db: world.db,
        projections: rebuilding,
        concurrentSessions: true,
        batchSize: 7,
      });
    } finally {
      await live.stop();
    }

    expect(seenWhileRebuilding).toEqual([999]);
    const events = await allEvents(world.store);
    await catchUp({ store: world.store, db: world.db, projections });
    const global = events.filter((event) => (event.data as { region: string }).region === "global").length;
    expect((await regionCounts(world.db)).global).toBe(global);
    expect(await world.db.selectFrom("tenant_names").select("tenant_id").execute()).toHaveLength(
      events.length,
    );
    expect(await checkpointOf(world.db, "tenant_names")).toBe(events.at(-1)!.position);

    // The live tables' constraints and indexes, under their names; no schema left behind.
    const { rows: indexes } = await sql<{ indexname: string }>`select indexname from pg_indexes
      where schemaname = 'public' and tablename = 'tenant_names' order by indexname`.execute(world.db);
    expect(indexes.map((row) => row.indexname)).toEqual(["tenant_names_by_name", "tenant_names_pkey"]);
    const { rows: schemas } = await sql<{ n: number }>`select count(*)::int as n from pg_namespace
      where nspname like 'rebuild_%'`.execute(world.db);
    expect(schemas[0]!.n).toBe(0);
  });

  it("swaps in when a reader's transaction deadlocks with the swap", async () => {
    const projections = [regionCounter(), tenantNames];
    await catchUp({ store: world.store, db: world.db, projections });
    // The swap moves tenants_by_region, then tenant_names. The reader holds tenant_names, and
    // asks for tenants_by_region once the swap holds it and waits for tenant_names: a cycle,
    // which PostgreSQL breaks by failing one of the two.
    const swapWaiting = async () => {
      for (;;) {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
          where wait_event_type = 'Lock' and query like 'alter table%'`.execute(world.db);
        if (rows[0]!.n > 0) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const reader = world.db.transaction().execute(async (trx) => {
      await trx.selectFrom("tenant_names").select("name").execute();
      await swapWaiting();
      return trx.selectFrom("tenants_by_region").selectAll().execute();
    });
    const readerOutcome = reader.then(
      () => "read",
      (error: { code?: string }) => error.code,
    );
    await rebuildBeside({ store: world.store, db: world.db, projections, concurrentSessions: true });
    // Whichever side PostgreSQL failed, the replay is in: a reader failed by it may try again.
    expect(["read", "40P01"]).toContain(await readerOutcome);
    const events = await allEvents(world.store);
    expect(await checkpointOf(world.db, "tenant_names")).toBe(events.at(-1)!.position);
    const { rows: schemas } = await sql<{ n: number }>`select count(*)::int as n from pg_namespace
      where nspname like 'rebuild_%'`.execute(world.db);
    expect(schemas[0]!.n).toBe(0);
  });
});
