/**
 * The one place that composes the packages' read side: every projection the service runs has
 * its tables made by one of the migration sets the runtime migrates, and a name of its own.
 */
import { createPgliteDataDir, type TestDataDir } from "@dmarc-ledger/db/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openRuntime, type Runtime } from "../src/open-runtime.js";
import { allProjections } from "../src/projections.js";

describe("the runtime's migration sets and projections", () => {
  let dataDir: TestDataDir;
  let runtime: Runtime;
  beforeAll(async () => {
    dataDir = await createPgliteDataDir();
    runtime = await openRuntime({ DMARC_LEDGER_DATA_DIR: dataDir.dataDir });
  });
  afterAll(async () => {
    await runtime?.close();
    dataDir?.remove();
  });

  it("make every table a projection owns, each projection named once", async () => {
    const { rows } = await sql<{ table_name: string }>`select table_name from information_schema.tables
      where table_schema = 'public'`.execute(runtime.db);
    const made = new Set(rows.map((row) => row.table_name));
    const owned = allProjections.flatMap((projection) => projection.tables);
    expect(owned.filter((table) => !made.has(table))).toEqual([]);
    expect(new Set(owned).size).toBe(owned.length);
    const names = allProjections.map((projection) => projection.name);
    expect(new Set(names).size).toBe(names.length);
    expect(made.has("projection_checkpoint")).toBe(true);
  });
});
