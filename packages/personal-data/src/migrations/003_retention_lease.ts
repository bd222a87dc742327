import type { Kysely } from "kysely";

export const retentionLeaseMigration = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("retention_lease")
      .addColumn("name", "text", (c) => c.primaryKey())
      .addColumn("holder", "text")
      .addColumn("leased_until", "timestamptz", (c) => c.notNull())
      .addColumn("last_run", "timestamptz")
      .execute();
  },
};
