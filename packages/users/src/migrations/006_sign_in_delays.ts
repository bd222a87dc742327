import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
type AnyDb = Kysely<any>;

/**
 * Sign-in throttling per (account, client address) with growing delays: a pair's wait runs from
 * its last failure. The rows of before keep their window's start as their last failure.
 */
export const signInDelaysMigration = {
  up: async (db: AnyDb) => {
    await sql`alter table sign_in_throttle add column last_failed_at timestamptz`.execute(db);
    await sql`update sign_in_throttle set last_failed_at = window_started_at`.execute(db);
    await sql`alter table sign_in_throttle alter column last_failed_at set not null`.execute(db);
  },
};
