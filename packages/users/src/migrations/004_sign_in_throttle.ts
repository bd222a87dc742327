import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
type AnyDb = Kysely<any>;

/**
 * Failed sign-ins per account and per client address, in the database rather than in the
 * process: several API processes share one count, and a restart does not reset it.
 */
export const signInThrottleMigration = {
  up: async (db: AnyDb) => {
    await db.schema
      .createTable("sign_in_throttle")
      .addColumn("key", "text", (c) => c.primaryKey())
      .addColumn("failures", "integer", (c) => c.notNull())
      .addColumn("window_started_at", "timestamptz", (c) => c.notNull())
      .execute();
  },
};
