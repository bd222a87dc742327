import type { Kysely } from "kysely";

export const safeSpf = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("safe_spf")
      .addColumn("domain", "text", (c) => c.primaryKey())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("original", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("records", "text", (c) => c.notNull())
      .addColumn("lookups_before", "integer")
      .addColumn("lookups_after", "integer")
      .addColumn("warnings", "text", (c) => c.notNull())
      .addColumn("last_computed", "timestamptz")
      .addColumn("last_error", "text")
      .addColumn("retrying", "boolean", (c) => c.notNull().defaultTo(false))
      .addColumn("updated_at", "timestamptz", (c) => c.notNull())
      .execute();
  },
};
