import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresEventStore, type PostgresEventStore } from "../src/index.js";
import { adapterDatabases, openAdapterDatabase } from "./helpers.js";

/**
 * Migration 004: on a PostgreSQL server with lz4 (Debian's) a report-sized document is stored
 * lz4-compressed and reads back as written; PGlite has no lz4 and keeps pglz, with the same reads.
 */
describe.each(adapterDatabases)("PostgreSQL adapter on %s: documents' compression", (_name, server) => {
  let opened: Awaited<ReturnType<typeof openAdapterDatabase>> | undefined;
  let store: PostgresEventStore;

  beforeAll(async () => {
    opened = await openAdapterDatabase(server, "dl_event_store_compression");
    store = await openPostgresEventStore(opened.database);
  });
  afterAll(async () => {
    await store?.close();
    await opened?.close();
  });

  it(`compresses a large document with ${server ? "lz4" : "pglz"} and reads it back as written`, async () => {
    // Twenty report rows' worth of JSON (about 6 KB): past the 2 KB at which a value is compressed.
    const rows = Array.from({ length: 20 }, (_, i) => ({
      sourceIp: `192.0.2.${i}`,
      count: i + 1,
      disposition: "none",
      dkim: [{ domain: "example.com", selector: `s${i}`, result: "pass", humanResult: null }],
      spf: [{ domain: "example.com", scope: "mfrom", result: i % 2 ? "pass" : "fail" }],
      headerFrom: "example.com",
    }));
    const data = { reportId: "compressed", rows, note: "ünïcode ç\u2028" };
    await store.append("compressed", [{ type: "Report", data, metadata: { causedBy: "test" } }], "no_stream");
    const { rows: stored } = await sql<{ method: string | null; raw: number; kept: number }>`
      select pg_column_compression(data) as method, octet_length(data::text) as raw,
        pg_column_size(data) as kept
      from events where stream = 'compressed'`.execute(opened!.database.db);
    expect(stored[0]!.method).toBe(server ? "lz4" : "pglz");
    expect(stored[0]!.kept).toBeLessThan(stored[0]!.raw / 2);
    const [read] = await store.readAll("start", 10);
    expect(read!.data).toEqual(data);
  });
});
