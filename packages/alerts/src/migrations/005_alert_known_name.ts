import type { Kysely } from "kysely";

export const alertKnownName = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    // new_sender by name: the services and base domains seen for a domain, and the new addresses
    // waiting for the resolver to name them.
    await db.schema
      .createTable("alert_known_name")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("sender", "text", (c) => c.notNull())
      .addColumn("first_seen", "timestamptz", (c) => c.notNull())
      .addPrimaryKeyConstraint("alert_known_name_pk", ["domain", "sender"])
      .execute();
    await db.schema
      .createTable("alert_unnamed_new")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("source_ip", "text", (c) => c.notNull())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("baseline", "boolean", (c) => c.notNull())
      .addColumn("period_start", "text", (c) => c.notNull())
      .addColumn("period_end", "text", (c) => c.notNull())
      .addColumn("figures", "text", (c) => c.notNull())
      .addColumn("recorded_at", "timestamptz", (c) => c.notNull())
      .addColumn("stream", "text", (c) => c.notNull())
      .addColumn("position", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("alert_unnamed_new_pk", ["domain", "source_ip"])
      .execute();
    await db.schema.createIndex("alert_unnamed_new_ip").on("alert_unnamed_new").column("source_ip").execute();
    await db.schema
      .createIndex("alert_unnamed_new_recorded")
      .on("alert_unnamed_new")
      .column("recorded_at")
      .execute();
  },
};
