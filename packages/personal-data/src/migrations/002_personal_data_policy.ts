import type { Kysely } from "kysely";

export const personalDataPolicyMigration = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("personal_data_policy")
      .addColumn("tenant_id", "text", (c) => c.primaryKey())
      .addColumn("failure_report_days", "integer", (c) => c.notNull())
      .addColumn("raw_input_days", "integer", (c) => c.notNull())
      .addColumn("aggregate_days", "integer")
      .addColumn("redaction", "boolean", (c) => c.notNull())
      .execute();
  },
};
