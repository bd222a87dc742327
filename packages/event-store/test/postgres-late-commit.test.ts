import { type Database, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { sql, type Transaction } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  openPostgresEventStore,
  type PostgresEventStore,
  type RecordedEvent,
  StreamOrderConflictError,
} from "../src/index.js";
import { collect, sleep, uniqueStream } from "./helpers.js";

/**
 * Transactions held open on a real server: the cases that make naive subscribers skip events.
 * Other tests on the shared server may hold back the snapshot xmin for a moment; the waits allow it.
 */
describe("PostgreSQL adapter: late commits", () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let store: PostgresEventStore;

  beforeAll(async () => {
    testDatabase = await createTestDatabase("dl_event_store_late");
    database = await openDatabase({ kind: "postgres", url: testDatabase.url });
    store = await openPostgresEventStore(database, { pollIntervalMs: 20 });
  });
  afterAll(async () => {
    await store?.close();
    await database?.close();
    await testDatabase?.drop();
  });

  /** A transaction the test steps through: run(step) executes inside it, commit() ends it. */
  function heldTransaction() {
    let commit!: () => void;
    const released = new Promise<void>((resolve) => {
      commit = resolve;
    });
    let handOver!: (trx: Transaction<unknown>) => void;
    const opened = new Promise<Transaction<unknown>>((resolve) => {
      handOver = resolve;
    });
    const done = database.db.transaction().execute(async (trx) => {
      handOver(trx);
      await released;
    });
    return {
      trx: opened,
      async commit() {
        commit();
        await done;
      },
    };
  }

  const event = (label: string) => [{ type: "Late", data: { label } }];

  it("delivers an event whose transaction took the smaller position but committed later", async () => {
    const prefix = uniqueStream("late");
    const mine = (e: RecordedEvent) => e.stream.startsWith(prefix);
    const subscription = store.subscribe((await store.headPosition()) ?? "start", { maxBatch: 10 });
    const collector = collect(subscription, mine);

    const a = heldTransaction();
    const appendedA = await store.appendWithin(await a.trx, `${prefix}-a`, event("a"), "no_stream");
    const appendedB = await store.append(`${prefix}-b`, event("b"), "no_stream");
    await sleep(300); // many polls while A is open
    // B is held back behind A rather than delivered ahead of it.
    expect(collector.events).toEqual([]);

    await a.commit();
    await collector.until((events) => events.length === 2);
    expect(collector.events.map((e) => e.stream)).toEqual([`${prefix}-a`, `${prefix}-b`]);
    expect(collector.events.map((e) => e.position)).toEqual([appendedA.position, appendedB.position]);
    await subscription.close();
    await collector.finished;
  });

  it("delivers in transaction order when the older transaction takes the larger sequence value", async () => {
    const prefix = uniqueStream("trap");
    const mine = (e: RecordedEvent) => e.stream.startsWith(prefix);
    const subscription = store.subscribe((await store.headPosition()) ?? "start", { maxBatch: 10 });
    const collector = collect(subscription, mine);

    // Q gets its transaction id first, R second; R takes the smaller sequence value and stays
    // open while Q commits. Ordered by sequence, a reader would deliver Q, then skip R forever.
    const q = heldTransaction();
    await sql`select pg_current_xact_id()`.execute(await q.trx);
    const r = heldTransaction();
    const appendedR = await store.appendWithin(await r.trx, `${prefix}-r`, event("r"), "no_stream");
    const appendedQ = await store.appendWithin(await q.trx, `${prefix}-q`, event("q"), "no_stream");
    await q.commit();
    await collector.until((events) => events.length === 1);
    expect(collector.events[0]!.stream).toBe(`${prefix}-q`);

    await sleep(200);
    await r.commit();
    await collector.until((events) => events.length === 2);
    expect(collector.events.map((e) => e.stream)).toEqual([`${prefix}-q`, `${prefix}-r`]);
    expect(appendedR.position > appendedQ.position).toBe(true);

    const replayed = (await store.readAll("start", 10_000)).filter(mine);
    expect(replayed.map((e) => e.id)).toEqual(collector.events.map((e) => e.id));
    await subscription.close();
    await collector.finished;
  });

  it("refuses an append that would order a stream's events against their revisions", async () => {
    const stream = uniqueStream("order");
    const early = heldTransaction();
    await sql`select pg_current_xact_id()`.execute(await early.trx);
    await store.append(stream, event("first"), "no_stream");
    await expect(store.appendWithin(await early.trx, stream, event("second"), "any")).rejects.toBeInstanceOf(
      StreamOrderConflictError,
    );
    await early.commit();
    expect((await store.readStream(stream)).map((e) => e.revision)).toEqual([0n]);
  });

  it("migrates idempotently", async () => {
    const again = await openPostgresEventStore(database);
    expect(await again.headPosition()).not.toBeNull();
    await again.close();
  });
});
