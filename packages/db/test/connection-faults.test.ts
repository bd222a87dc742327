import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isDatabaseUnavailable, isStatementCancelled } from "../src/connection-errors.js";
import { type Database, openDatabase } from "../src/open-database.js";
import { createTestDatabase, type TestDatabase } from "../src/testing/index.js";

describe("a PostgreSQL pool when the server ends, cancels or times out its statements", () => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await createTestDatabase("dl_db_faults");
  });
  afterAll(async () => {
    await test.drop();
  });

  async function open(options: Parameters<typeof openDatabase>[1] = {}): Promise<Database> {
    return openDatabase({ kind: "postgres", url: test.url }, options);
  }

  it("reports a connection the server ends in the middle of a transaction, fails the statement, and goes on", async () => {
    const lost: Error[] = [];
    const database = await open({ onConnectionError: (error) => lost.push(error) });
    try {
      const failure = await database.db
        .transaction()
        .execute(async (trx) => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
          // Another session ends this one between two statements of its transaction.
          const other = await open();
          await sql`select pg_terminate_backend(${rows[0]!.pid})`.execute(other.db);
          await other.close();
          await new Promise((resolve) => setTimeout(resolve, 100));
          await sql`select 1`.execute(trx);
        })
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(isDatabaseUnavailable(failure)).toBe(true);
      expect(lost.length).toBeGreaterThan(0);
      // The pool dropped the broken connection: the next statement gets a fresh one.
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
      expect(rows[0]!.one).toBe(1);
    } finally {
      await database.close();
    }
  });

  it("cuts a statement at statementTimeoutMs", async () => {
    const database = await open({ statementTimeoutMs: 300 });
    try {
      const failure = await sql`select pg_sleep(5)`.execute(database.db).then(
        () => null,
        (error: unknown) => error,
      );
      expect(isStatementCancelled(failure)).toBe(true);
    } finally {
      await database.close();
    }
  });

  it("cancels the statements running on its connections when asked, and only those", async () => {
    const database = await open();
    try {
      const sleeping = sql`select pg_sleep(30)`.execute(database.db).then(
        () => null,
        (error: unknown) => error,
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await database.cancelQueries()).toBe(1);
      expect(isStatementCancelled(await sleeping)).toBe(true);
      expect(await database.cancelQueries()).toBe(0);
    } finally {
      await database.close();
    }
  });

  it("says an unreachable server is unavailable, and a wrong statement is not", async () => {
    const database = await openDatabase({ kind: "postgres", url: "postgres://postgres@127.0.0.1:9/none" });
    try {
      const unreachable = await sql`select 1`.execute(database.db).then(
        () => null,
        (error: unknown) => error,
      );
      expect(isDatabaseUnavailable(unreachable)).toBe(true);
    } finally {
      await database.close();
    }
    const reachable = await open();
    try {
      const wrong = await sql`select * from no_such_table`.execute(reachable.db).then(
        () => null,
        (error: unknown) => error,
      );
      expect(wrong).toBeInstanceOf(Error);
      expect(isDatabaseUnavailable(wrong)).toBe(false);
      expect(isStatementCancelled(wrong)).toBe(false);
    } finally {
      await reachable.close();
    }
  });
});
