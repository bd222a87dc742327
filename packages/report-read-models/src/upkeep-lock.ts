import type { AnySchema } from "@dmarc-ledger/db";
import { type Kysely, type RawBuilder, sql } from "kysely";

/**
 * Runs `work` on one connection holding the session advisory lock `key`, or returns `[]` at once
 * when another process holds it: two projectors may run, and an upkeep round is done by one of
 * them (the other skips its turn rather than waiting behind a round that may take a minute).
 */
export async function underUpkeepLock<Db, T>(
  db: Kysely<AnySchema>,
  key: RawBuilder<unknown>,
  work: (connection: Kysely<Db>) => Promise<T[]>,
): Promise<T[]> {
  return db.connection().execute(async (connection) => {
    const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${key}) as locked`.execute(
      connection,
    );
    if (!rows[0]?.locked) return [];
    try {
      return await work(connection as unknown as Kysely<Db>);
    } finally {
      await sql`select pg_advisory_unlock(${key})`.execute(connection);
    }
  });
}
