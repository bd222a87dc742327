import { createHash } from "node:crypto";
import { migrateToLatest, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usersMigrations } from "../src/index.js";

/** The users' tables as the version before sealed addresses left them. */
const before = {
  name: usersMigrations.name,
  migrations: Object.fromEntries(Object.entries(usersMigrations.migrations).filter(([name]) => name < "005")),
};

let testDb: TestDatabase;
beforeAll(async () => {
  testDb = await createTestDatabase("dl_users_m5");
});
afterAll(async () => {
  await testDb?.drop();
});

describe.each([
  ["PostgreSQL", () => ({ kind: "postgres" as const, url: testDb.url })],
  ["PGlite", () => ({ kind: "pglite-memory" as const })],
])("migration 005_sealed_addresses on %s", (_name, config) => {
  it("moves an existing deployment's addresses out of the tables, to the streams their events are on", async () => {
    const database = await openDatabase(config());
    try {
      const db = database.db;
      await migrateToLatest(db, before);
      const email = "ümlaut@example.com";
      await sql`insert into user_account values ('u1', ${email}, now(), true)`.execute(db);
      await sql`insert into user_password_link (token_hash, user_id, email, tenant_id, expires_at)
        values ('h', 'u1', ${email}, 't', now())`.execute(db);
      await sql`insert into sign_in_throttle values ('account:x', 1, now()), ('address:192.0.2.1', 1, now())`.execute(
        db,
      );
      await migrateToLatest(db, usersMigrations);
      // The stream the v1 events are on: user-<SHA-256 of the address's UTF-8>, as JavaScript makes it.
      const stream = `user-${createHash("sha256").update(email).digest("hex")}`;
      const { rows: accounts } = await sql<Record<string, unknown>>`select * from user_account`.execute(db);
      expect(accounts).toEqual([expect.objectContaining({ user_id: "u1", stream })]);
      expect(JSON.parse(accounts[0]!.sealed_email as string)).toEqual({ clear: email });
      expect(accounts[0]).not.toHaveProperty("email");
      const { rows: links } = await sql<Record<string, unknown>>`select * from user_password_link`.execute(
        db,
      );
      expect(links).toEqual([expect.objectContaining({ user_id: "u1", stream })]);
      expect(links[0]).not.toHaveProperty("email");
      // The per-account counts were keyed by a plain SHA-256 of the address: dropped.
      const { rows: keys } = await sql<{ key: string }>`select key from sign_in_throttle`.execute(db);
      expect(keys).toEqual([{ key: "address:192.0.2.1" }]);
    } finally {
      await database.close();
    }
  });
});
