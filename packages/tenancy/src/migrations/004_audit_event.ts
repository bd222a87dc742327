import type { Kysely } from "kysely";

export const auditEvent = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("audit_event")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("revision", "bigint", (c) => c.notNull())
      .addColumn("event_type", "text", (c) => c.notNull())
      .addColumn("recorded_at", "timestamptz", (c) => c.notNull())
      .addColumn("caused_by", "text", (c) => c.notNull())
      .addColumn("correlation_id", "text")
      .addColumn("data", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("audit_event_pk", ["domain", "revision"])
      .execute();
  },
};
