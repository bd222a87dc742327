import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { type DatabaseConfig, DataDirLockedError, migrateToLatest, openDatabase } from "../src/index.js";
import { createPgliteDataDir, createTestDatabase, type TestDatabase } from "../src/testing/index.js";

const openerScript = fileURLToPath(new URL("./fixtures/open-data-dir.ts", import.meta.url));

describe("PGlite data directory", () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "dl-db-"));
    dirs.push(dir);
    return dir;
  };
  // A directory with a fresh database in it, a copy of the run's (initdb costs 7 s of CPU): for
  // the tests that are about the lock, not about making the database.
  const freshDataDir = async () => {
    const { dataDir } = await createPgliteDataDir("dl-db-");
    dirs.push(dataDir);
    return dataDir;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  // An empty directory: the database is made on the first open, as on the service's first start.
  it("keeps data across reopen", async () => {
    const dataDir = tempDir();
    const first = await openDatabase({ kind: "pglite", dataDir });
    await sql`create table kept (v int)`.execute(first.db);
    await sql`insert into kept values (42)`.execute(first.db);
    await first.close();
    const second = await openDatabase({ kind: "pglite", dataDir });
    const { rows } = await sql<{ v: number }>`select v from kept`.execute(second.db);
    expect(rows).toEqual([{ v: 42 }]);
    await second.close();
  });

  it("refuses a second process with a clear error and leaves the database intact", async () => {
    const dataDir = await freshDataDir();
    const owner = await openDatabase({ kind: "pglite", dataDir });
    await sql`create table kept (v int)`.execute(owner.db);
    await sql`insert into kept values (7)`.execute(owner.db);

    const child = spawnSync(process.execPath, ["--import", "tsx", openerScript, dataDir], {
      encoding: "utf8",
    });
    expect(child.status).toBe(3);
    expect(child.stdout).toContain(`in use by process ${process.pid}`);

    const { rows } = await sql<{ v: number }>`select v from kept`.execute(owner.db);
    expect(rows).toEqual([{ v: 7 }]);
    await owner.close();
  });

  it("refuses a second open in the same process", async () => {
    const dataDir = await freshDataDir();
    const owner = await openDatabase({ kind: "pglite", dataDir });
    await expect(openDatabase({ kind: "pglite", dataDir })).rejects.toBeInstanceOf(DataDirLockedError);
    await owner.close();
    const again = await openDatabase({ kind: "pglite", dataDir });
    await again.close();
  });

  it("takes over a lock left by a process that died", async () => {
    const dataDir = await freshDataDir();
    const deadPid = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    }).stdout;
    writeFileSync(join(dataDir, "dmarc-ledger.lock"), deadPid);
    const database = await openDatabase({ kind: "pglite", dataDir });
    await database.close();
  });
});

describe.each<[string, () => Promise<{ config: DatabaseConfig; cleanup: () => Promise<void> }>]>([
  [
    "PGlite",
    async () => {
      const { dataDir, remove } = await createPgliteDataDir("dl-db-");
      return { config: { kind: "pglite", dataDir }, cleanup: async () => remove() };
    },
  ],
  [
    "PostgreSQL",
    async () => {
      const testDb: TestDatabase = await createTestDatabase();
      return { config: { kind: "postgres", url: testDb.url }, cleanup: testDb.drop };
    },
  ],
])("migrations on %s", (_name, setup) => {
  it("runs each migration set once, in order, with its own bookkeeping", async () => {
    const { config, cleanup } = await setup();
    const database = await openDatabase(config);
    const ran: string[] = [];
    const set = {
      name: "demo",
      migrations: {
        "001_first": {
          up: async (db: Parameters<typeof migrateToLatest>[0]) => {
            ran.push("001");
            await sql`create table demo (id int primary key)`.execute(db);
          },
        },
        "002_second": {
          up: async (db: Parameters<typeof migrateToLatest>[0]) => {
            ran.push("002");
            await sql`alter table demo add column name text`.execute(db);
          },
        },
      },
    };
    await migrateToLatest(database.db, set);
    await migrateToLatest(database.db, set);
    expect(ran).toEqual(["001", "002"]);
    const { rows } = await sql<{ name: string }>`select name from demo_migration order by name`.execute(
      database.db,
    );
    expect(rows.map((row) => row.name)).toEqual(["001_first", "002_second"]);
    await database.close();
    await cleanup();
  });
});
