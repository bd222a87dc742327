import { type Kysely, sql } from "kysely";

export const projectionCheckpoint = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("projection_checkpoint")
      .addColumn("projection", "text", (c) => c.primaryKey())
      .addColumn("position", "numeric", (c) => c.notNull())
      .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
  },
};
