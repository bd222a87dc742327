/**
 * An empty data directory gets its database before PGlite opens it (pglite-initdb.ts): from
 * PGlite's initdb in a child process, which leaves it as the template, or as a copy of the
 * template; moved in with PG_VERSION last, so that a directory a first start left half made is
 * made again, and one that holds a database is left alone.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../src/index.js";
import { createPgliteDatabase, pgliteTemplateDir } from "../src/pglite-initdb.js";

describe("a new PGlite data directory's database", () => {
  const dirs: string[] = [];
  const fresh = () => {
    const dir = mkdtempSync(join(tmpdir(), "dl-initdb-"));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const staged = (dataDir: string) => readdirSync(dataDir).filter((name) => name.startsWith(".initdb-"));

  it("is made by initdb in a child process, kept as the template, and copied from it next time", async () => {
    const template = join(fresh(), "cache", "pglite-test");
    const first = fresh();
    await createPgliteDatabase(first, template);
    expect(existsSync(join(first, "PG_VERSION"))).toBe(true);
    expect(existsSync(join(template, "PG_VERSION"))).toBe(true);
    expect(staged(first)).toEqual([]);

    // The next one is a copy of the template (which a marker tells).
    writeFileSync(join(template, "made-once"), "");
    const second = fresh();
    await createPgliteDatabase(second, template);
    expect(existsSync(join(second, "made-once"))).toBe(true);
    const database = await openDatabase({ kind: "pglite", dataDir: second });
    await sql`create table kept (v int)`.execute(database.db);
    await sql`insert into kept values (7)`.execute(database.db);
    await database.close();

    // Made once: the next open finds it and keeps what was written.
    const version = statSync(join(second, "PG_VERSION")).mtimeMs;
    await createPgliteDatabase(second, null);
    expect(statSync(join(second, "PG_VERSION")).mtimeMs).toBe(version);
    const again = await openDatabase({ kind: "pglite", dataDir: second });
    expect((await sql<{ v: number }>`select v from kept`.execute(again.db)).rows).toEqual([{ v: 7 }]);
    await again.close();
  });

  it("is made again when a first start left it half made", async () => {
    const dataDir = fresh();
    // What a start killed between moving the entries in and PG_VERSION leaves, and its staging.
    mkdirSync(join(dataDir, "base", "1"), { recursive: true });
    writeFileSync(join(dataDir, "base", "1", "junk"), "left over");
    mkdirSync(join(dataDir, ".initdb-leftover"));
    await createPgliteDatabase(dataDir, null);
    expect(existsSync(join(dataDir, "base", "1", "junk"))).toBe(false);
    expect(staged(dataDir)).toEqual([]);
    const database = await openDatabase({ kind: "pglite", dataDir });
    expect((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows).toEqual([{ one: 1 }]);
    await database.close();
  });

  it("has its template in the user's cache, named after PGlite's version", () => {
    expect(pgliteTemplateDir({ XDG_CACHE_HOME: "/var/cache/u" })).toMatch(
      /^\/var\/cache\/u\/dmarc-ledger\/pglite-\d+\.\d+\.\d+$/,
    );
  });
});
