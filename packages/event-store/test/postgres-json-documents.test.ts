import { type Database, migrateToLatest, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventStoreMigrations, openPostgresEventStore } from "../src/index.js";

/**
 * Migration 003 turned the documents from jsonb into json, 004 into text: events written before
 * them must read back the same, and events written after them keep their text as written.
 */
describe("PostgreSQL adapter: documents stored as JSON text", () => {
  let testDatabase: TestDatabase;
  let database: Database;

  beforeAll(async () => {
    testDatabase = await createTestDatabase("dl_event_store_json");
    database = await openDatabase({ kind: "postgres", url: testDatabase.url });
  });
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  it("reads events written as jsonb before the migrations, and writes JSON text after them", async () => {
    const before = Object.fromEntries(
      Object.entries(eventStoreMigrations.migrations).filter(([name]) => name < "003"),
    );
    await migrateToLatest(database.db, { name: eventStoreMigrations.name, migrations: before });
    const old = { report: "r1", rows: [{ sourceIp: "192.0.2.1", count: 3, arc: null }], ünï: "ç\u2028" };
    await sql`insert into streams (stream, revision) values ('old', 0)`.execute(database.db);
    await sql`insert into events (stream, revision, type, data, metadata, id)
      values ('old', 0, 'Old', ${JSON.stringify(old)}::jsonb, '{"causedBy":"test"}'::jsonb, gen_random_uuid())`.execute(
      database.db,
    );

    const store = await openPostgresEventStore(database);
    try {
      const { rows: types } = await sql<{ column_name: string; data_type: string }>`
        select column_name, data_type from information_schema.columns
        where table_name = 'events' and column_name in ('data', 'metadata') order by column_name`.execute(
        database.db,
      );
      expect(types).toEqual([
        { column_name: "data", data_type: "text" },
        { column_name: "metadata", data_type: "text" },
      ]);
      // Key order as written (jsonb would sort "zeta" after "alpha").
      const fresh = { zeta: 1, alpha: [true, { nested: "x" }], text: 'line\nbreak "quoted"' };
      await store.append("new", [{ type: "New", data: fresh, metadata: { causedBy: "test" } }], "no_stream");
      const all = await store.readAll("start", 10);
      expect(all.map((event) => [event.stream, event.data, event.metadata.causedBy])).toEqual([
        ["old", old, "test"],
        ["new", fresh, "test"],
      ]);
      expect(Object.keys(all[1]!.data as object)).toEqual(["zeta", "alpha", "text"]);
    } finally {
      await store.close();
    }
  });
});
