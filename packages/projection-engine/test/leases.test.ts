/**
 * Projections and jobs shared among processes through leases: each run by one process at a time,
 * taken over when its owner is gone, and a batch written under a lease that was lost rolls back.
 */
import { type Database, openDatabase } from "@dmarc-ledger/db";
import type { RecordedEvent } from "@dmarc-ledger/event-store";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { runLeasedJob } from "../src/leased-job.js";
import { startLeasedProjector } from "../src/leased-projector.js";
import { fenceLeases, forgetExpiredLeases, LeaseLostError, tryAcquireLease } from "../src/leases.js";
import type { Projection } from "../src/projection.js";
import {
  allEvents,
  type CountSchema,
  cuttableLink,
  type EngineWorld,
  openEngineWorld,
  regionCounter,
  regionCounts,
  tenantNames,
} from "./support.js";

function expectedCounts(events: readonly RecordedEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const event of events) {
    const region = (event.data as { region: string }).region;
    counts[region] = (counts[region] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("leases", () => {
  let world: EngineWorld | undefined;
  const opened: Database[] = [];
  afterEach(async () => {
    for (const database of opened.splice(0)) await database.close().catch(() => {});
    await world?.close();
    world = undefined;
  });

  it("shares the projections between two projectors, and applies every event once", async () => {
    world = await openEngineWorld("dl_lease_share");
    await world.createTenants(20);
    const other = await openDatabase({ kind: "postgres", url: world.url });
    opened.push(other);
    const projections: Projection[] = [regionCounter(), tenantNames];
    const a = startLeasedProjector({ store: world.store, db: world.db, projections, leaseTtlMs: 1000 });
    const b = startLeasedProjector({
      store: world.store,
      db: other.withSchema<CountSchema>(),
      projections: [regionCounter(), tenantNames],
      leaseTtlMs: 1000,
    });
    try {
      await until("each runs one projection", () => a.owned().length === 1 && b.owned().length === 1);
      expect([...a.owned(), ...b.owned()].sort()).toEqual(["tenant_names", "tenants_by_region"]);
      const last = await world.createTenants(15);
      expect(await a.waitFor(last.position, 20_000)).toBe(true);
      const all = await allEvents(world.store);
      expect(await regionCounts(world.db)).toEqual(expectedCounts(all));
      expect(await world.db.selectFrom("tenant_names").select("tenant_id").execute()).toHaveLength(
        all.length,
      );
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it("takes over a projector cut off in the middle of a batch, losing nothing and counting nothing twice", async () => {
    world = await openEngineWorld("dl_lease_takeover");
    await world.createTenants(10);
    const link = await cuttableLink(world.url);
    const doomed = await openDatabase({ kind: "postgres", url: link.url });
    opened.push(doomed);
    let inBatch!: () => void;
    const cutOffMidBatch = new Promise<void>((resolve) => {
      inBatch = resolve;
    });
    // The doomed process hangs inside its first batch after the survivor has joined, holding
    // its lease's row and its checkpoint's: the cut must roll that batch back.
    let hang = false;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const doomedProjector = startLeasedProjector({
      store: world.store,
      db: doomed.withSchema<CountSchema>(),
      projections: [
        regionCounter(async () => {
          if (!hang) return;
          inBatch();
          await released;
        }),
      ],
      leaseTtlMs: 1000,
    });
    await until("the doomed projector runs the projection", () => doomedProjector.owned().length === 1);
    const survivor = startLeasedProjector({
      store: world.store,
      db: world.db,
      projections: [regionCounter()],
      leaseTtlMs: 1000,
    });
    try {
      hang = true;
      await world.createTenants(10);
      await cutOffMidBatch;
      await link.cut();
      const startedWaiting = Date.now();
      await until("the survivor took the projection over", () => survivor.owned().length === 1);
      // The lease runs out a second after the doomed process's last renewal.
      expect(Date.now() - startedWaiting).toBeLessThan(10_000);
      const last = await world.createTenants(5);
      expect(await survivor.waitFor(last.position, 20_000)).toBe(true);
      expect(await regionCounts(world.db)).toEqual(expectedCounts(await allEvents(world.store)));
    } finally {
      release();
      await survivor.stop();
      await doomedProjector.stop().catch(() => {});
    }
  });

  it("goes on projecting after its lease was lost and taken again (the database away past its expiry)", async () => {
    world = await openEngineWorld("dl_lease_again");
    await world.createTenants(3);
    const projector = startLeasedProjector({
      store: world.store,
      db: world.db,
      projections: [regionCounter()],
      leaseTtlMs: 1000,
    });
    try {
      await until("it runs the projection", () => projector.owned().length === 1);
      // As if its renewals had failed past the expiry and another owner had come and gone.
      await sql`update projection_lease set token = token + 5 where name = 'projection:tenants_by_region'`.execute(
        world.db,
      );
      const last = await world.createTenants(4);
      expect(await projector.waitFor(last.position, 20_000)).toBe(true);
      expect(await regionCounts(world.db)).toEqual(expectedCounts(await allEvents(world.store)));
    } finally {
      await projector.stop();
    }
  });

  it("refuses a write fenced by a lease another owner took since", async () => {
    world = await openEngineWorld("dl_lease_fence");
    const stale = await tryAcquireLease(world.db, "projection:x", "first", 50);
    expect(stale).not.toBeNull();
    expect(await tryAcquireLease(world.db, "projection:x", "second", 50)).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const taken = await tryAcquireLease(world.db, "projection:x", "second", 60_000);
    expect(taken!.token).toBeGreaterThan(stale!.token);
    await expect(
      world.db.transaction().execute(async (trx) => {
        await fenceLeases(trx, [stale!], 60_000);
        await trx.insertInto("tenant_names").values({ tenant_id: "t", name: "written" }).execute();
      }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(await world.db.selectFrom("tenant_names").selectAll().execute()).toEqual([]);
    // The holder's own fence passes.
    await world.db.transaction().execute((trx) => fenceLeases(trx, [taken!], 60_000));
  });

  it("forgets the member leases of processes gone an hour ago, and only those", async () => {
    world = await openEngineWorld("dl_lease_forget");
    await sql`insert into projection_lease (name, owner, token, expires_at) values
      ('member:projector:gone', 'gone', 1, now() - interval '2 hours'),
      ('member:projector:recent', 'recent', 1, now() - interval '1 minute'),
      ('projection:old', 'gone', 1, now() - interval '2 hours')`.execute(world.db);
    await forgetExpiredLeases(world.db, "member:projector:", 3_600_000);
    const { rows } = await sql<{ name: string }>`select name from projection_lease order by name`.execute(
      world.db,
    );
    expect(rows.map((row) => row.name)).toEqual(["member:projector:recent", "projection:old"]);
  });

  it("runs a job in one process at a time, and in another once the first stops", async () => {
    world = await openEngineWorld("dl_lease_job");
    let running = 0;
    let most = 0;
    const job = () => {
      running++;
      most = Math.max(most, running);
      return {
        async stop() {
          running--;
        },
      };
    };
    const first = runLeasedJob({ db: world.db, name: "refresh", start: job, leaseTtlMs: 500 });
    await until("one runs the job", () => first.running());
    const second = runLeasedJob({ db: world.db, name: "refresh", start: job, leaseTtlMs: 500 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(second.running()).toBe(false);
      await first.stop();
      await until("the second runs the job", () => second.running());
      expect(most).toBe(1);
    } finally {
      await first.stop();
      await second.stop();
    }
  });
});
