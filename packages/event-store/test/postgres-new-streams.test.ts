import { type Database, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { sql, type Transaction } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AppendNotFirstError,
  openPostgresEventStore,
  type PostgresEventStore,
  WrongExpectedVersionError,
} from "../src/index.js";
import { readAllPaged, uniqueStream, waitForHead } from "./helpers.js";

/** Several new streams in one statement (the intake's group commit): as the appends one by one. */
describe("PostgreSQL adapter: new streams appended together", () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let store: PostgresEventStore;

  beforeAll(async () => {
    testDatabase = await createTestDatabase("dl_event_store_new_streams");
    database = await openDatabase({ kind: "postgres", url: testDatabase.url });
    store = await openPostgresEventStore(database, { pollIntervalMs: 20 });
  });
  afterAll(async () => {
    await store?.close();
    await database?.close();
    await testDatabase?.drop();
  });

  const events = (label: string, count: number) =>
    Array.from({ length: count }, (_, index) => ({ type: "Together", data: { label, index } }));

  it("appends each new stream in order, and refuses those that exist, as appending them one by one would", async () => {
    const prefix = uniqueStream("together");
    const existing = `${prefix}-b`;
    await store.append(existing, events("before", 1), "no_stream");
    const before = await store.headPosition();
    const streams = [`${prefix}-a`, existing, `${prefix}-c`];
    const results = await database.db.transaction().execute((trx) =>
      store.appendNewStreamsWithin(
        trx,
        streams.map((stream, index) => ({ stream, events: events(stream, index + 1) })),
        { transaction: "fresh" },
      ),
    );
    expect(results[1]).toBeInstanceOf(WrongExpectedVersionError);
    expect((results[1] as WrongExpectedVersionError).actual).toBe(0n);
    const [a, c] = [results[0], results[2]] as { nextRevision: bigint; position: bigint }[];
    expect(a!.nextRevision).toBe(0n);
    expect(c!.nextRevision).toBe(2n);
    expect(c!.position).toBeGreaterThan(a!.position);

    await waitForHead(store, c!.position);
    const stored = await readAllPaged(store, before ?? "start", 100, (event) =>
      event.stream.startsWith(prefix),
    );
    // In the order given, each stream in revision order; the existing stream kept its one event.
    expect(stored.map((event) => [event.stream, event.revision])).toEqual([
      [`${prefix}-a`, 0n],
      [`${prefix}-c`, 0n],
      [`${prefix}-c`, 1n],
      [`${prefix}-c`, 2n],
    ]);
    expect(stored.at(0)!.position).toBe(a!.position);
    expect(stored.at(-1)!.position).toBe(c!.position);
    expect((await store.readStream(existing)).map((event) => event.data)).toEqual([
      { label: "before", index: 0 },
    ]);
  });

  it("refuses a stream named twice, and a transaction that wrote before its first append", async () => {
    const stream = uniqueStream("twice");
    await expect(
      database.db.transaction().execute((trx) =>
        store.appendNewStreamsWithin(trx, [
          { stream, events: events("one", 1) },
          { stream, events: events("two", 1) },
        ]),
      ),
    ).rejects.toThrow("distinct");
    await expect(
      database.db.transaction().execute(async (trx) => {
        await sql`select pg_current_xact_id()`.execute(trx);
        return store.appendNewStreamsWithin(trx, [{ stream, events: events("late", 1) }]);
      }),
    ).rejects.toBeInstanceOf(AppendNotFirstError);
  });

  it("serialises the documents before it takes the append lock, which every other append waits on", async () => {
    const stream = uniqueStream("unserialisable");
    // A document JSON.stringify refuses: the append fails while building its statement.
    const refused = { type: "Together", data: { count: 1n } };
    const lockHeldAfter = (append: (trx: Transaction<unknown>) => Promise<unknown>) =>
      database.db.transaction().execute(async (trx) => {
        await expect(append(trx)).rejects.toThrow(/BigInt/);
        const { rows } = await sql<{ held: boolean }>`
          select exists (select 1 from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()
            and classid = ${0x45565453} and objid = 0 and granted) as held`.execute(trx);
        return rows[0]!.held;
      });
    expect(
      await lockHeldAfter((trx) =>
        store.appendNewStreamsWithin(trx, [{ stream, events: [refused] }], { transaction: "fresh" }),
      ),
    ).toBe(false);
    // The one-stream append, as a report's next chunk or a resumed report takes it.
    expect(
      await lockHeldAfter((trx) =>
        store.appendWithin(trx, stream, [refused], "any", { transaction: "fresh" }),
      ),
    ).toBe(false);
    expect(await store.readStream(stream)).toEqual([]);
  });
});
