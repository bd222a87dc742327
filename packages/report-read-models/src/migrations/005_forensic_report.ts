import type { Kysely } from "kysely";

export const forensicReport = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("forensic_report")
      .addColumn("forensic_id", "bigint", (c) => c.primaryKey())
      .addColumn("identity", "text", (c) => c.notNull().unique())
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("received", "bigint", (c) => c.notNull())
      .addColumn("subject", "text", (c) => c.notNull())
      .addColumn("amount", "bigint", (c) => c.notNull())
      .addColumn("headers", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("forensic_report_by_received")
      .on("forensic_report")
      .columns(["received", "forensic_id"])
      .execute();
  },
};
