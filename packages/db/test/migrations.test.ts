/**
 * migrateToLatest: sets already up to date are checked with one query, and everything else goes
 * to Kysely's Migrator as before (pending migrations run once, under its lock; a database ahead
 * of the code, or different from it, is refused).
 */
import { type Kysely, type KyselyPlugin, type Migration, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Database,
  type DatabaseConfig,
  MigrationFailedError,
  type MigrationSet,
  migrateToLatest,
  openDatabase,
} from "../src/index.js";
import { createTestDatabase } from "../src/testing/index.js";

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema
type AnyDb = Kysely<any>;

/** A set whose migrations create a table each and note that they ran. */
function demoSet(name: string, migrationNames: string[], ran: string[]) {
  const migrations: Record<string, Migration> = {};
  for (const migration of migrationNames) {
    migrations[migration] = {
      up: async (db: AnyDb) => {
        ran.push(`${name}/${migration}`);
        await sql`create table ${sql.table(`${name}_${migration}`)} (id int)`.execute(db);
      },
    };
  }
  return { name, migrations };
}

/** Counts the statements sent through a handle. */
function counted(db: AnyDb): { db: AnyDb; statements: () => number } {
  let statements = 0;
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }) => {
      statements++;
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  return { db: db.withPlugin(plugin), statements: () => statements };
}

describe.each<[string, () => Promise<{ config: DatabaseConfig; cleanup: () => Promise<void> }>]>([
  ["PGlite", async () => ({ config: { kind: "pglite-memory" }, cleanup: async () => {} })],
  [
    "PostgreSQL",
    async () => {
      const testDb = await createTestDatabase("dl_clifast_migrations");
      return { config: { kind: "postgres", url: testDb.url }, cleanup: testDb.drop };
    },
  ],
])("migrateToLatest on %s", (_name, setup) => {
  // One database for the cases below (a PGlite takes seconds to create): each uses its own sets.
  let database: Database;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const made = await setup();
    database = await openDatabase(made.config);
    cleanup = made.cleanup;
  });
  afterAll(async () => {
    await database?.close();
    await cleanup?.();
  });

  it("checks sets that are up to date with one query, and runs nothing", async () => {
    const ran: string[] = [];
    const sets = [demoSet("fresh", ["001", "002"], ran), demoSet("fresh_b", ["001"], ran)];
    await migrateToLatest(database.db, ...sets);
    expect(ran).toEqual(["fresh/001", "fresh/002", "fresh_b/001"]);

    const { db, statements } = counted(database.db);
    await migrateToLatest(db, ...sets);
    expect(statements()).toBe(1);
    expect(ran).toHaveLength(3);
  });

  it("runs the migrations the code gained since, and a set it has not seen before", async () => {
    const ran: string[] = [];
    await migrateToLatest(database.db, demoSet("gain", ["001"], ran));
    await migrateToLatest(database.db, demoSet("gain", ["001", "002"], ran), demoSet("gain_b", ["001"], ran));
    expect(ran).toEqual(["gain/001", "gain/002", "gain_b/001"]);
    const { rows } = await sql<{ name: string }>`select name from gain_migration order by name`.execute(
      database.db,
    );
    expect(rows.map((row) => row.name)).toEqual(["001", "002"]);
  });

  it("refuses a database ahead of the code, as the Migrator always did", async () => {
    const ran: string[] = [];
    await migrateToLatest(database.db, demoSet("ahead", ["001", "002"], ran));
    const older = migrateToLatest(database.db, demoSet("ahead", ["001"], ran));
    await expect(older).rejects.toBeInstanceOf(MigrationFailedError);
    await expect(older).rejects.toThrow(/previously executed migration 002 is missing/);
  });

  it("refuses a database whose migrations differ from the code's", async () => {
    const ran: string[] = [];
    await migrateToLatest(database.db, demoSet("differ", ["001_first"], ran));
    await expect(migrateToLatest(database.db, demoSet("differ", ["001_other"], ran))).rejects.toThrow(
      /previously executed migration 001_first is missing/,
    );
    // Same names, but one inserted before a migration already run: out of order.
    await expect(
      migrateToLatest(database.db, demoSet("differ", ["000_inserted", "001_first"], ran)),
    ).rejects.toThrow(/corrupted migrations: expected previously executed migration 001_first/);
    expect(ran).toEqual(["differ/001_first"]);
  });
});

describe("migrateToLatest of sets whose tables another set made first (formerly)", () => {
  /** A former set that made two tables in one migration and changed one of them later. */
  const legacy = (ran: string[], upTo = 2) => {
    const migrations: Record<string, Migration> = {
      "001_both": {
        up: async (db: AnyDb) => {
          ran.push("legacy/001_both");
          await sql`create table moved_one (id int primary key)`.execute(db);
          await sql`create table moved_two (id int primary key)`.execute(db);
        },
      },
      "002_more": {
        up: async (db: AnyDb) => {
          ran.push("legacy/002_more");
          await sql`alter table moved_two add column note text`.execute(db);
        },
      },
    };
    return { name: "legacy", migrations: Object.fromEntries(Object.entries(migrations).slice(0, upTo)) };
  };
  /** The same tables, each in a set of its own now, one migration a step; `two` gained a third. */
  const split = (ran: string[]): MigrationSet[] => {
    const step = (name: string, statement: string) => ({
      up: async (db: AnyDb) => {
        ran.push(name);
        await sql.raw(statement).execute(db);
      },
    });
    return [
      {
        name: "one",
        migrations: { "001_one": step("one/001_one", "create table moved_one (id int primary key)") },
        formerly: { set: "legacy", migrations: { "001_one": "001_both" } },
      },
      {
        name: "two",
        migrations: {
          "001_two": step("two/001_two", "create table moved_two (id int primary key)"),
          "002_note": step("two/002_note", "alter table moved_two add column note text"),
          "003_since": step("two/003_since", "alter table moved_two add column since timestamptz"),
        },
        formerly: { set: "legacy", migrations: { "001_two": "001_both", "002_note": "002_more" } },
      },
    ];
  };
  const recorded = async (db: AnyDb, set: string) =>
    (
      await sql<{ name: string }>`select name from ${sql.table(`${set}_migration`)} order by name`.execute(db)
    ).rows.map((row) => row.name);

  const onFreshDatabase = async (work: (db: AnyDb) => Promise<void>) => {
    const testDb = await createTestDatabase("dl_formerly");
    const database = await openDatabase({ kind: "postgres", url: testDb.url });
    try {
      await work(database.db);
    } finally {
      await database.close();
      await testDb.drop();
    }
  };

  it("records what the former set did, keeps the rows, and runs only what is new", () =>
    onFreshDatabase(async (db) => {
      const ran: string[] = [];
      await migrateToLatest(db, legacy(ran));
      await sql`insert into moved_two (id, note) values (1, 'kept')`.execute(db);

      await migrateToLatest(db, ...split(ran));
      expect(ran).toEqual(["legacy/001_both", "legacy/002_more", "two/003_since"]);
      expect(await recorded(db, "one")).toEqual(["001_one"]);
      expect(await recorded(db, "two")).toEqual(["001_two", "002_note", "003_since"]);
      expect(await recorded(db, "legacy")).toEqual(["001_both", "002_more"]);
      const { rows } = await sql<{ note: string }>`select note from moved_two`.execute(db);
      expect(rows).toEqual([{ note: "kept" }]);

      // Then, like any set up to date: one query, nothing run.
      const watched = counted(db);
      await migrateToLatest(watched.db, ...split(ran));
      expect(watched.statements()).toBe(1);
      expect(ran).toHaveLength(3);
    }));

  it("carries what the former set got to, and runs the rest in order", () =>
    onFreshDatabase(async (db) => {
      const ran: string[] = [];
      await migrateToLatest(db, legacy(ran, 1));
      await migrateToLatest(db, ...split(ran));
      expect(ran).toEqual(["legacy/001_both", "two/002_note", "two/003_since"]);
      expect(await recorded(db, "two")).toEqual(["001_two", "002_note", "003_since"]);
    }));

  it("runs every migration of a database the former set never touched", () =>
    onFreshDatabase(async (db) => {
      const ran: string[] = [];
      await migrateToLatest(db, ...split(ran));
      expect(ran).toEqual(["one/001_one", "two/001_two", "two/002_note", "two/003_since"]);
    }));

  it("carries once when two processes start on the same former database", async () => {
    const testDb = await createTestDatabase("dl_formerly");
    const config: DatabaseConfig = { kind: "postgres", url: testDb.url };
    const [first, second] = [await openDatabase(config), await openDatabase(config)];
    try {
      const ran: string[] = [];
      await migrateToLatest(first.db, legacy(ran));
      await Promise.all([
        migrateToLatest(first.db, ...split(ran)),
        migrateToLatest(second.db, ...split(ran)),
      ]);
      expect(ran).toEqual(["legacy/001_both", "legacy/002_more", "two/003_since"]);
      expect(await recorded(first.db, "two")).toEqual(["001_two", "002_note", "003_since"]);
    } finally {
      await first.close();
      await second.close();
      await testDb.drop();
    }
  });
});

describe("migrateToLatest from two processes at once, on PostgreSQL", () => {
  it("runs a pending migration once: both see it pending, the Migrator's lock lets one run it", async () => {
    const testDb = await createTestDatabase("dl_clifast_migrations");
    const config: DatabaseConfig = { kind: "postgres", url: testDb.url };
    const [first, second] = [await openDatabase(config), await openDatabase(config)];
    try {
      const ran: string[] = [];
      // A fresh database: neither finds the bookkeeping tables.
      await Promise.all([
        migrateToLatest(first.db, demoSet("alpha", ["001"], ran)),
        migrateToLatest(second.db, demoSet("alpha", ["001"], ran)),
      ]);
      expect(ran).toEqual(["alpha/001"]);
      // Then the code gains a migration, and two processes start with it.
      for (let round = 2; round <= 4; round++) {
        const names = Array.from({ length: round }, (_, i) => `00${i + 1}`);
        await Promise.all([
          migrateToLatest(first.db, demoSet("alpha", names, ran)),
          migrateToLatest(second.db, demoSet("alpha", names, ran)),
        ]);
      }
      expect(ran).toEqual(["alpha/001", "alpha/002", "alpha/003", "alpha/004"]);
    } finally {
      await first.close();
      await second.close();
      await testDb.drop();
    }
  });
});
