import type { Kysely } from "kysely";

export const alertSenderState = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    // The evaluator's own copies of what names a source IP and what a tenant approved (the
    // unapproved_sender rule): like its other state, not read models, so a replay raises nothing.
    await db.schema
      .createTable("alert_source_name")
      .addColumn("source_ip", "text", (c) => c.primaryKey())
      .addColumn("service", "text")
      .addColumn("base_domain", "text")
      .addColumn("asn", "bigint")
      .execute();
    await db.schema
      .createTable("alert_sender_approval")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("sender", "text", (c) => c.notNull())
      .addColumn("approved", "boolean", (c) => c.notNull())
      .addPrimaryKeyConstraint("alert_sender_approval_pk", ["domain", "kind", "sender"])
      .execute();
    await db.schema
      .createTable("alert_sender_day")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("sender", "text", (c) => c.notNull())
      .addColumn("day", "text", (c) => c.notNull())
      .addColumn("failed", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("alert_sender_day_pk", ["domain", "sender", "day"])
      .execute();
    await db.schema
      .createTable("alert_unnamed_failing")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("source_ip", "text", (c) => c.notNull())
      .addColumn("day", "text", (c) => c.notNull())
      .addColumn("failed", "bigint", (c) => c.notNull())
      .addColumn("recorded_at", "timestamptz", (c) => c.notNull())
      .addColumn("stream", "text", (c) => c.notNull())
      .addColumn("position", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("alert_unnamed_failing_pk", ["domain", "source_ip", "day"])
      .execute();
    await db.schema
      .createIndex("alert_unnamed_failing_ip")
      .on("alert_unnamed_failing")
      .column("source_ip")
      .execute();
    await db.schema
      .createIndex("alert_unnamed_failing_recorded")
      .on("alert_unnamed_failing")
      .column("recorded_at")
      .execute();
  },
};
