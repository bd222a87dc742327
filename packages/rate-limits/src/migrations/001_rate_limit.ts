import type { Kysely } from "kysely";

export const rateLimit = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    // The columns rate-limiter-flexible's RateLimiterPostgres reads and writes (its own
    // CREATE TABLE, made here instead so that the table is migrated like every other).
    await db.schema
      .createTable("rate_limit")
      .addColumn("key", "varchar(255)", (c) => c.primaryKey())
      .addColumn("points", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("expire", "bigint")
      .execute();
  },
};
