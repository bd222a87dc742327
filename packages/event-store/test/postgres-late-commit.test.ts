import { type Database, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { sql, type Transaction } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AppendNotFirstError,
  openPostgresEventStore,
  type PostgresEventStore,
  type RecordedEvent,
} from "../src/index.js";
import { collect, sleep, uniqueStream } from "./helpers.js";

/**
 * Transactions held open on a real server: the cases that make naive subscribers skip events,
 * and the unrelated long transaction that made a snapshot-xmin guard stall them.
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

  it("makes an append wait for one in flight, so nothing commits behind a reader", async () => {
    const prefix = uniqueStream("late");
    const mine = (e: RecordedEvent) => e.stream.startsWith(prefix);
    const subscription = store.subscribe((await store.headPosition()) ?? "start", { maxBatch: 10 });
    const collector = collect(subscription, mine);

    // A appends and stays open: B, which would have taken a larger position and committed
    // first, waits for A instead.
    const a = heldTransaction();
    const appendedA = await store.appendWithin(await a.trx, `${prefix}-a`, event("a"), "no_stream");
    let bDone = false;
    const b = store.append(`${prefix}-b`, event("b"), "no_stream").then((result) => {
      bDone = true;
      return result;
    });
    await sleep(300); // many polls while A is open
    expect(bDone).toBe(false);
    expect(collector.events).toEqual([]);

    await a.commit();
    const appendedB = await b;
    await collector.until((events) => events.length === 2);
    expect(collector.events.map((e) => e.stream)).toEqual([`${prefix}-a`, `${prefix}-b`]);
    expect(collector.events.map((e) => e.position)).toEqual([appendedA.position, appendedB.position]);
    expect(appendedB.position > appendedA.position).toBe(true);
    await subscription.close();
    await collector.finished;
  });

  it("refuses an append in a transaction that already has an id", async () => {
    // Q takes its transaction id before R appends and commits; an append by Q would sort before
    // R's events, which a reader may already have delivered.
    const stream = uniqueStream("order");
    const q = heldTransaction();
    await sql`select pg_current_xact_id()`.execute(await q.trx);
    await store.append(stream, event("r"), "no_stream");
    await expect(store.appendWithin(await q.trx, stream, event("q"), "any")).rejects.toBeInstanceOf(
      AppendNotFirstError,
    );
    await q.commit();
    expect((await store.readStream(stream)).map((e) => e.revision)).toEqual([0n]);
  });

  it("lets a transaction append twice, and write after its appends", async () => {
    const stream = uniqueStream("twice");
    const t = heldTransaction();
    await store.appendWithin(await t.trx, stream, event("one"), "no_stream");
    await store.appendWithin(await t.trx, stream, event("two"), 0n);
    await sql`select pg_current_xact_id()`.execute(await t.trx);
    await t.commit();
    expect((await store.readStream(stream)).map((e) => e.revision)).toEqual([0n, 1n]);
  });

  it("is not held back by an unrelated long transaction elsewhere on the server", async () => {
    // A snapshot-xmin guard would wait for this transaction, in another database, to end.
    const elsewhere = await createTestDatabase("dl_event_store_other");
    const other = await openDatabase({ kind: "postgres", url: elsewhere.url });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started!: () => void;
    const open = new Promise<void>((resolve) => {
      started = resolve;
    });
    const longTransaction = other.db.transaction().execute(async (trx) => {
      await sql`select pg_current_xact_id()`.execute(trx);
      started();
      await released;
    });
    await open;
    try {
      const prefix = uniqueStream("unrelated");
      const subscription = store.subscribe((await store.headPosition()) ?? "start", { maxBatch: 10 });
      const collector = collect(subscription, (e) => e.stream.startsWith(prefix));
      await store.append(`${prefix}-x`, event("x"), "no_stream");
      await collector.until((events) => events.length === 1);
      expect(collector.events[0]!.stream).toBe(`${prefix}-x`);
      await subscription.close();
      await collector.finished;
    } finally {
      release();
      await longTransaction;
      await other.close();
      await elsewhere.drop();
    }
  });

  it("migrates idempotently", async () => {
    const again = await openPostgresEventStore(database);
    expect(await again.headPosition()).not.toBeNull();
    await again.close();
  });
});
