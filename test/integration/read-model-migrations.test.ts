/**
 * Read-model migrations that change what is already stored:
 * - 009 (007 of the read_models set before the split) turns each ranking row's first and last
 *   fact second into offsets from its bucket's edges: rankings written before it keep their rows,
 *   with the same extents;
 * - 010 (was 008) replaces the change-number sequence with a counter row, which must continue
 *   from the highest number on the facts.
 * And the split itself (issue 22): a database the one read_models set migrated opens with the
 * sets of the packages that own its tables now, nothing created twice and nothing lost.
 */
import { readFileSync } from "node:fs";
import { type Database, type MigrationSet, migrateToLatest, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { reportReadModelMigrations } from "@dmarc-ledger/report-read-models";
import { openRuntime, tableMigrations } from "@dmarc-ledger/runtime";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSideCatalog } from "../support/schema-catalog.js";

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
      Object.entries(reportReadModelMigrations.migrations).filter(([name]) => name < "009"),
    );
    await migrateToLatest(database.db, { name: reportReadModelMigrations.name, migrations: before });
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

    // Up to the migration after which rankings are built again (012): 009 and 010 kept them.
    const upTo011 = Object.fromEntries(
      Object.entries(reportReadModelMigrations.migrations).filter(([name]) => name < "012"),
    );
    await migrateToLatest(database.db, { name: reportReadModelMigrations.name, migrations: upTo011 });

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

    // 012: agg_source's rows are kept and counted per domain and day; the rankings are dropped,
    // to be built again by the next upkeep, which looks at every fact once.
    await sql`insert into agg_source (domain, t, source_ip, organization, disposition, arc, spf_domain,
      dkim_domain, dmarc_pass, volume, unaligned_arc_pass, dkim_aligned, spf_aligned, dkim_pass, spf_pass,
      changed_seq) values ('example.com', ${december.start}, '192.0.2.4', 'Org', 'none', '', '', '', false,
      1, 0, 0, 0, 0, 0, 42)`.execute(database.db);
    await migrateToLatest(database.db, reportReadModelMigrations);
    const { rows: facts } = await sql<{ n: number }>`select count(*)::int as n from agg_source`.execute(
      database.db,
    );
    expect(facts[0]!.n).toBe(4);
    const { rows: counts } = await sql<{ domain: string; t: string; facts: string; unaligned_facts: string }>`
      select domain, t::text, facts::text, unaligned_facts::text from agg_source_count`.execute(database.db);
    expect(counts).toEqual([
      { domain: "example.com", t: String(december.start), facts: "4", unaligned_facts: "1" },
    ]);
    const { rows: rankings } = await sql<{ n: number }>`
      select (select count(*) from source_ranking) + (select count(*) from source_ranking_build) as n`.execute(
      database.db,
    );
    expect(Number(rankings[0]!.n)).toBe(0);
    const { rows: upkeep } = await sql<{ checked_seq: string }>`
      select checked_seq::text from source_ranking_upkeep`.execute(database.db);
    expect(upkeep).toEqual([{ checked_seq: "0" }]);
  });
});

/** The migrations of the read_models set, as a database made by main up to fbb2d08 records them. */
const formerNames = [
  "001_skeleton",
  "002_groupings",
  "003_audit_and_safe_spf",
  "004_report_domains",
  "005_source_rankings",
  "006_ranking_extents",
  "007_ranking_extents_as_offsets",
  "008_source_change_counter",
  "009_safe_spf_refresh",
  "010_source_ip_names",
  "011_domain_claim",
];

/** The read side's schema as main's read_models set made it (fbb2d08): support/schema-catalog.ts. */
const schemaOfMain = readFileSync(new URL("fixtures/read-side-schema-fbb2d08.txt", import.meta.url), "utf8")
  .trim()
  .split("\n");

/** The sets that took over read_models' tables. */
const successors = tableMigrations.filter((set) => set.formerly?.set === "read_models");

/** Of a set, only the migrations that stand for former ones up to `upTo` (those a database had). */
function asFormerly(set: MigrationSet, upTo: string): MigrationSet {
  const formerly = set.formerly!.migrations;
  return {
    name: set.name,
    migrations: Object.fromEntries(
      Object.entries(set.migrations).filter(
        ([name]) => formerly[name] !== undefined && formerly[name]! <= upTo,
      ),
    ),
  };
}

/**
 * A database as main left it after the read_models set ran up to `upTo`: the same tables (the
 * successors' migrations that stand for those, whose schema the first test holds to main's), and
 * only main's bookkeeping.
 */
async function madeByMain(db: Kysely<unknown>, upTo: string): Promise<void> {
  await migrateToLatest(db, ...successors.map((set) => asFormerly(set, upTo)));
  for (const set of successors) {
    await sql`drop table ${sql.table(`${set.name}_migration`)}, ${sql.table(`${set.name}_migration_lock`)}`.execute(
      db,
    );
  }
  await sql`create table read_models_migration (name varchar(255) not null primary key,
    timestamp varchar(255) not null)`.execute(db);
  await sql`create table read_models_migration_lock (id varchar(255) not null primary key,
    is_locked integer not null default 0)`.execute(db);
  await sql`insert into read_models_migration_lock (id, is_locked) values ('migration_lock', 0)`.execute(db);
  for (const [index, name] of formerNames.filter((name) => name <= upTo).entries()) {
    await sql`insert into read_models_migration (name, timestamp)
      values (${name}, ${new Date(Date.UTC(2026, 0, 1 + index)).toISOString()})`.execute(db);
  }
}

const recorded = async (db: Kysely<unknown>, set: string) =>
  (
    await sql<{ name: string }>`select name from ${sql.table(`${set}_migration`)} order by name`.execute(db)
  ).rows.map((row) => row.name);

describe("the read_models set split among the packages that own its tables", () => {
  const databases: TestDatabase[] = [];
  const open: Database[] = [];
  const freshDatabase = async () => {
    const testDatabase = await createTestDatabase("dl_read_side_split");
    databases.push(testDatabase);
    const database = await openDatabase({ kind: "postgres", url: testDatabase.url });
    open.push(database);
    return { url: testDatabase.url, db: database.db };
  };
  afterAll(async () => {
    for (const database of open) await database.close();
    for (const database of databases) await database.drop();
  });

  it("covers every former migration, and makes main's schema from them", async () => {
    const covered = new Set(successors.flatMap((set) => Object.values(set.formerly!.migrations)));
    expect([...covered].sort()).toEqual(formerNames);
    const { db } = await freshDatabase();
    await migrateToLatest(db, ...successors.map((set) => asFormerly(set, "999")));
    expect(await readSideCatalog(db)).toEqual(schemaOfMain);
  });

  /** The read side's schema as the code makes it in an empty database. */
  const latestSchema = async () => {
    const { db } = await freshDatabase();
    await migrateToLatest(db, ...tableMigrations);
    return readSideCatalog(db);
  };

  it("opens a database main made: what read_models ran is recorded, every row kept, nothing made twice", async () => {
    const { url, db } = await freshDatabase();
    await madeByMain(db, "011_domain_claim");
    const rows = {
      tenant: sql`insert into tenant values ('t1', 'acme', 'global', now())`,
      domain: sql`insert into domain values ('example.com', 't1', 'Brands', now())`,
      agg_domain: sql`insert into agg_domain values ('example.com', 1700000000, 5, 4, 0, 4, 3, 4, 3)`,
      safe_spf: sql`insert into safe_spf (domain, tenant_id, original, status, records, warnings, updated_at,
        min_ttl) values ('example.com', 't1', 'v=spf1 -all', 'computed', '[]', '[]', now(), 300)`,
      safe_spf_refresh: sql`insert into safe_spf_refresh (domain, next_due) values ('example.com', now())`,
      source_ip_name: sql`insert into source_ip_name (source_ip, source_domain, outcome)
        values ('192.0.2.1', 'example.net', 'found')`,
      projection_checkpoint: sql`insert into projection_checkpoint values ('domains', 42, now())`,
    };
    for (const insert of Object.values(rows)) await insert.execute(db);

    // As the service opens it: every package's set, and the event store's.
    const runtime = await openRuntime({ DATABASE_URL: url }, { eventStoreUrl: null });
    try {
      // The schema an empty database gets: main's, and what later migrations made of it.
      expect(await readSideCatalog(db)).toEqual(await latestSchema());
      for (const table of Object.keys(rows)) {
        const { rows: counted } = await sql<{
          n: number;
        }>`select count(*)::int as n from ${sql.table(table)}`.execute(db);
        expect({ table, rows: counted[0]!.n }).toEqual({ table, rows: 1 });
      }
      for (const set of successors)
        expect(await recorded(db, set.name)).toEqual(Object.keys(set.migrations).sort());
      expect(await recorded(db, "read_models")).toEqual(formerNames);
      // And the next start finds every set up to date.
      await migrateToLatest(db, ...tableMigrations);
    } finally {
      await runtime.close();
    }
  });

  it("opens a database of an older main, and runs what it had not", async () => {
    const { db } = await freshDatabase();
    await madeByMain(db, "008_source_change_counter");
    expect(await readSideCatalog(db)).not.toEqual(schemaOfMain);
    await sql`insert into tenant values ('t1', 'acme', 'global', now())`.execute(db);

    await migrateToLatest(db, ...tableMigrations);
    expect(await readSideCatalog(db)).toEqual(await latestSchema());
    for (const set of successors)
      expect(await recorded(db, set.name)).toEqual(Object.keys(set.migrations).sort());
    const { rows } = await sql<{ name: string }>`select name from tenant`.execute(db);
    expect(rows).toEqual([{ name: "acme" }]);
  });
});
