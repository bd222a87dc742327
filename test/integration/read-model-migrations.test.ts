/**
 * Read-model migrations that change what is already stored:
 * - 007 turns each ranking row's first and last fact second into offsets from its bucket's edges:
 *   rankings written before it keep their rows, with the same extents;
 * - 008 replaces the change-number sequence with a counter row, which must continue from the
 *   highest number on the facts.
 */
import { type Database, migrateToLatest, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { readModelMigrations } from "@dmarc-ledger/read-models";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

describe("read-model migrations over stored rows", () => {
  let testDatabase: TestDatabase;
  let database: Database;

  beforeAll(async () => {
    testDatabase = await createTestDatabase("dl_ranking_offsets");
    database = await openDatabase({ kind: "postgres", url: testDatabase.url });
  });
  afterAll(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  it("keep rankings with their extents, and continue the change numbers", async () => {
    const before = Object.fromEntries(
      Object.entries(readModelMigrations.migrations).filter(([name]) => name < "007"),
    );
    await migrateToLatest(database.db, { name: readModelMigrations.name, migrations: before });
    const december = { start: Date.UTC(2025, 11, 1) / 1000, end: Date.UTC(2026, 0, 1) / 1000 - 1 };
    const year = { start: Date.UTC(2025, 0, 1) / 1000, end: Date.UTC(2026, 0, 1) / 1000 - 1 };
    for (const [id, bucket] of [
      [1, december],
      [2, year],
    ] as const) {
      await sql`insert into source_ranking_build (ranking_id, tenant_id, scope, bucket_start, bucket_end,
        built_seq, domain_count, group_count) values (${id}, 't1', 'all', ${bucket.start}, ${bucket.end}, 7, 1, 2)`.execute(
        database.db,
      );
    }
    const group = (id: number, ip: string, firstT: number, lastT: number) =>
      sql`insert into source_ranking (ranking_id, domain, source_ip, organization, volume, dmarc_pass,
        unaligned_arc_pass, dkim_aligned, spf_aligned, dkim_pass, spf_pass, facts, first_t, last_t)
        values (${id}, 'example.com', ${ip}, 'Org', 5, 4, 0, 4, 3, 4, 3, 2, ${firstT}, ${lastT})`.execute(
        database.db,
      );
    await group(1, "192.0.2.1", december.start, december.end);
    await group(1, "192.0.2.2", december.start + 86_400, december.end - 3_600);
    await group(2, "192.0.2.2", december.start + 86_400, december.end - 3_600);

    for (const [ip, seq] of [
      ["192.0.2.1", 41],
      ["192.0.2.2", 42],
      ["192.0.2.3", 40],
    ] as const) {
      await sql`insert into agg_source (domain, t, source_ip, organization, disposition, arc, spf_domain,
        dkim_domain, dmarc_pass, volume, unaligned_arc_pass, dkim_aligned, spf_aligned, dkim_pass, spf_pass,
        changed_seq) values ('example.com', ${december.start}, ${ip}, 'Org', 'none', '', '', '', true,
        1, 0, 1, 1, 1, 1, ${seq})`.execute(database.db);
    }

    await migrateToLatest(database.db, readModelMigrations);

    const { rows } = await sql<{
      ranking_id: string;
      source_ip: string;
      start_offset: string;
      end_offset: string;
    }>`
      select ranking_id::text, source_ip, start_offset::text, end_offset::text from source_ranking
      order by ranking_id, source_ip`.execute(database.db);
    expect(rows).toEqual([
      { ranking_id: "1", source_ip: "192.0.2.1", start_offset: "0", end_offset: "0" },
      { ranking_id: "1", source_ip: "192.0.2.2", start_offset: "86400", end_offset: "3600" },
      {
        ranking_id: "2",
        source_ip: "192.0.2.2",
        start_offset: String(december.start + 86_400 - year.start),
        end_offset: "3600",
      },
    ]);
    const { rows: columns } = await sql<{
      column_name: string;
    }>`select column_name from information_schema.columns
      where table_name = 'source_ranking' and column_name in ('first_t', 'last_t')`.execute(database.db);
    expect(columns).toEqual([]);

    const { rows: counter } = await sql<{ single: boolean; last_seq: string }>`
      select single, last_seq::text from agg_source_change`.execute(database.db);
    expect(counter).toEqual([{ single: true, last_seq: "42" }]);
    const { rows: sequences } =
      await sql`select 1 from pg_class where relname = 'agg_source_change_seq'`.execute(database.db);
    expect(sequences).toEqual([]);
  });
});
