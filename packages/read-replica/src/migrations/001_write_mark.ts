import { type Kysely, sql } from "kysely";

export const writeMark = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("write_mark")
      .addColumn("caller", "text", (c) => c.primaryKey())
      .addColumn("lsn", sql`pg_lsn`, (c) => c.notNull())
      .addColumn("at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
  },
};
