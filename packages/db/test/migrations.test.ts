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
