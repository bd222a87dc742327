/**
 * PGlite starts with a 32 MB buffer cache (the service), or 16 MB opened for one command; the data
 * directory is the same one, read and written by either.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../src/index.js";

const bufferCache = async (database: Database) =>
  (await sql<{ shared_buffers: string }>`show shared_buffers`.execute(database.db)).rows[0]?.shared_buffers;
const kept = async (database: Database) =>
  (await sql<{ v: number }>`select v from kept order by v`.execute(database.db)).rows.map((row) => row.v);

describe("PGlite opened for one command", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "dl-db-short-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("has a 16 MB buffer cache, and reads and writes the service's data", async () => {
    const service = await openDatabase({ kind: "pglite", dataDir });
    expect(await bufferCache(service)).toBe("32MB");
    await sql`create table kept (v int)`.execute(service.db);
    await sql`insert into kept values (1)`.execute(service.db);
    await service.close();

    const command = await openDatabase({ kind: "pglite", dataDir }, { shortLived: true });
    expect(await bufferCache(command)).toBe("16MB");
    expect(await kept(command)).toEqual([1]);
    await sql`insert into kept values (2)`.execute(command.db);
    await command.close();

    const again = await openDatabase({ kind: "pglite", dataDir });
    expect(await bufferCache(again)).toBe("32MB");
    expect(await kept(again)).toEqual([1, 2]);
    await again.close();
  });
});
