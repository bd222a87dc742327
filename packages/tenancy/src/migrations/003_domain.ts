import type { Kysely } from "kysely";

export const domain = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("domain")
      .addColumn("domain", "text", (c) => c.primaryKey())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("group_name", "text")
      .addColumn("added_at", "timestamptz", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("domain_by_tenant").on("domain").columns(["tenant_id", "domain"]).execute();
  },
};
