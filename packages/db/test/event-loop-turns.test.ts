import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "../src/index.js";
import { createPgliteDataDir } from "../src/testing/index.js";

// PGlite runs a statement on this thread: a chain of statements with no other I/O between them
// would hold the event loop until its end (issue 40: an import handed to the service, 10.5 s).
describe("PGlite's statements and the event loop", () => {
  let database: Database;
  let remove: () => unknown;

  beforeAll(async () => {
    const made = await createPgliteDataDir("dl-db-turns-");
    remove = made.remove;
    database = await openDatabase({ kind: "pglite", dataDir: made.dataDir });
  });
  afterAll(async () => {
    await database?.close();
    await remove?.();
  });

  it("lets a timer and I/O run in the middle of a long chain of statements", async () => {
    let timerRanAfter: number | null = null;
    let statements = 0;
    setTimeout(() => {
      timerRanAfter = statements;
    }, 0);
    // Statements one after another until the timer has run, or 2,000 of them.
    for (; statements < 2_000 && timerRanAfter === null; statements++) {
      await sql`select generate_series(1, 200) as n`.execute(database.db);
    }
    expect(timerRanAfter).not.toBeNull();
    expect(timerRanAfter).toBeLessThan(2_000);
  });
});
