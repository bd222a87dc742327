import type { Kysely } from "kysely";

export const reportDomain = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("report_domain")
      .addColumn("domain", "text", (c) => c.primaryKey())
      .execute();
  },
};
