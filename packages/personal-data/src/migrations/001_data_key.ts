import { type Kysely, sql } from "kysely";

export const dataKeyMigration = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("data_key")
      .addColumn("key_id", "text", (c) => c.primaryKey())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("month", "text", (c) => c.notNull())
      .addColumn("wrapped", "bytea", (c) => c.notNull())
      .addColumn("master_key_id", "text", (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    // One key per tenant and month: two inputs sealing at once take the same one.
    await db.schema
      .createIndex("data_key_by_tenant_month")
      .on("data_key")
      .columns(["tenant_id", "month"])
      .unique()
      .execute();
  },
};
