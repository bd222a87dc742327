import { type Database, migrateToLatest, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, openTestPglite } from "@dmarc-ledger/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { personalDataMigrations, releaseRetentionLease, takeRetentionLease } from "../src/index.js";

const backends: [string, () => Promise<{ database: Database; drop: () => Promise<void> }>][] = [
  ["PGlite", async () => ({ database: await openTestPglite(), drop: async () => {} })],
  [
    "PostgreSQL",
    async () => {
      const test = await createTestDatabase("dl_lease");
      return { database: await openDatabase({ kind: "postgres", url: test.url }), drop: test.drop };
    },
  ],
];

const hour = 3_600_000;

describe.each(backends)("the retention job's lease on %s", (_name, open) => {
  let database: Database;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    ({ database, drop } = await open());
    await migrateToLatest(database.db, personalDataMigrations);
  });
  afterAll(async () => {
    await database?.close();
    await drop?.();
  });

  it("one holder at a time; once run, not again before the interval; a dead holder's lease runs out", async () => {
    const db = database.db;
    const taken = await Promise.all(
      ["a", "b", "c"].map((holder) => takeRetentionLease(db, holder, 60_000, hour)),
    );
    expect(taken.filter(Boolean)).toHaveLength(1);
    const holder = ["a", "b", "c"][taken.indexOf(true)]!;
    // Another holder cannot release it.
    await releaseRetentionLease(db, holder === "a" ? "b" : "a", true);
    expect(await takeRetentionLease(db, "d", 60_000, 0)).toBe(false);
    await releaseRetentionLease(db, holder, true);
    // It ran: not due again within the hour, due at once with no interval.
    expect(await takeRetentionLease(db, "d", 60_000, hour)).toBe(false);
    expect(await takeRetentionLease(db, "d", 1, 0)).toBe(true);
    // "d" died holding it for 1 ms: it runs out, and the next holder takes it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await takeRetentionLease(db, "e", 60_000, 0)).toBe(true);
    // A run that failed (released without running) leaves it due.
    await releaseRetentionLease(db, "e", false);
    expect(await takeRetentionLease(db, "f", 60_000, 0)).toBe(true);
  });
});
