import type { Kysely } from "kysely";

export const sourceIpName = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("source_ip_name")
      .addColumn("source_ip", "text", (c) => c.primaryKey())
      .addColumn("source_domain", "text", (c) => c.notNull())
      .execute();
  },
};
