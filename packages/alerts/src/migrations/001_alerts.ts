import { type Kysely, sql } from "kysely";

export const alerts = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("alert_rule")
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("rule", "text", (c) => c.notNull())
      .addColumn("enabled", "boolean", (c) => c.notNull())
      .addColumn("params", "text", (c) => c.notNull())
      .addColumn("updated_at", "timestamptz", (c) => c.notNull())
      .addPrimaryKeyConstraint("alert_rule_pk", ["tenant_id", "rule"])
      .execute();
    await db.schema
      .createTable("webhook_endpoint")
      .addColumn("endpoint_id", "text", (c) => c.primaryKey())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("alert_types", "text", (c) => c.notNull())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("enabled", "boolean", (c) => c.notNull())
      .addColumn("disabled_reason", "text")
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .addColumn("updated_at", "timestamptz", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("webhook_endpoint_tenant")
      .on("webhook_endpoint")
      .column("tenant_id")
      .execute();
    await db.schema
      .createTable("alert")
      .addColumn("alert_id", "text", (c) => c.primaryKey())
      .addColumn("position", "text", (c) => c.notNull())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("rule", "text", (c) => c.notNull())
      .addColumn("domain", "text")
      .addColumn("period_start", "timestamptz", (c) => c.notNull())
      .addColumn("period_end", "timestamptz", (c) => c.notNull())
      .addColumn("summary", "text", (c) => c.notNull())
      .addColumn("payload", "text", (c) => c.notNull())
      .addColumn("raised_at", "timestamptz", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("alert_tenant_raised")
      .on("alert")
      .columns(["tenant_id", "raised_at"])
      .execute();

    await db.schema
      .createTable("alert_domain_owner")
      .addColumn("domain", "text", (c) => c.primaryKey())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("alert_domain_state")
      .addColumn("domain", "text", (c) => c.primaryKey())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("first_report", "text", (c) => c.notNull())
      .addColumn("last_report_end", "timestamptz", (c) => c.notNull())
      .addColumn("last_report_at", "timestamptz", (c) => c.notNull())
      .addColumn("last_stream", "text", (c) => c.notNull())
      .addColumn("last_position", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("alert_known_sender")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("source_ip", "text", (c) => c.notNull())
      .addColumn("first_seen", "timestamptz", (c) => c.notNull())
      .addPrimaryKeyConstraint("alert_known_sender_pk", ["domain", "source_ip"])
      .execute();
    await db.schema
      .createTable("alert_domain_day")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("day", "text", (c) => c.notNull())
      .addColumn("messages", "bigint", (c) => c.notNull())
      .addColumn("failed", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("alert_domain_day_pk", ["domain", "day"])
      .execute();
    await db.schema
      .createTable("alert_safe_spf")
      .addColumn("domain", "text", (c) => c.primaryKey())
      .addColumn("records", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("alert_outbox")
      .addColumn("alert_id", "text", (c) => c.primaryKey())
      .addColumn("payload", "text", (c) => c.notNull())
      .addColumn("published", "boolean", (c) => c.notNull())
      .addColumn("after_position", "numeric", (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .execute();
    await sql`create index alert_outbox_unpublished on alert_outbox (created_at) where not published`.execute(
      db,
    );

    await db.schema
      .createTable("webhook_delivery")
      .addColumn("delivery_id", "text", (c) => c.primaryKey())
      .addColumn("alert_id", "text", (c) => c.notNull())
      .addColumn("endpoint_id", "text", (c) => c.notNull())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("body", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("next_attempt_at", "timestamptz", (c) => c.notNull())
      .addColumn("first_attempt_at", "timestamptz")
      .addColumn("last_attempt_at", "timestamptz")
      .addColumn("last_status", "integer")
      .addColumn("last_error", "text")
      .addColumn("lease_until", "timestamptz")
      .addColumn("delivered_at", "timestamptz")
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .execute();
    await sql`create index webhook_delivery_due on webhook_delivery (next_attempt_at) where status = 'pending'`.execute(
      db,
    );
    await db.schema
      .createIndex("webhook_delivery_endpoint")
      .on("webhook_delivery")
      .columns(["endpoint_id", "created_at"])
      .execute();
    await db.schema
      .createTable("webhook_secret")
      .addColumn("endpoint_id", "text", (c) => c.primaryKey())
      .addColumn("secret", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("alert_email")
      .addColumn("email_id", "text", (c) => c.primaryKey())
      .addColumn("alert_id", "text", (c) => c.notNull())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("address", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("next_attempt_at", "timestamptz", (c) => c.notNull())
      .addColumn("last_error", "text")
      .addColumn("lease_until", "timestamptz")
      .addColumn("sent_at", "timestamptz")
      .execute();
    await sql`create index alert_email_due on alert_email (next_attempt_at) where status = 'pending'`.execute(
      db,
    );
  },
};
