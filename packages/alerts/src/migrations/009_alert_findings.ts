import { type Kysely, sql } from "kysely";

export const alertFindings = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    // One finding per tenant, rule, domain and report day: what its alerts are made from when
    // they are sent (findings.ts), and what was sent of it.
    await db.schema
      .createTable("alert_finding")
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("rule", "text", (c) => c.notNull())
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("day", "text", (c) => c.notNull())
      .addColumn("members", "text", (c) => c.notNull().defaultTo("{}"))
      .addColumn("causes", "text", (c) => c.notNull().defaultTo("[]"))
      .addColumn("changed_at", "timestamptz", (c) => c.notNull())
      .addColumn("pending", "boolean", (c) => c.notNull())
      .addColumn("first_alert_id", "text")
      .addColumn("notices", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("sent_members", "text", (c) => c.notNull().defaultTo("[]"))
      .addColumn("sent_verdict", "boolean")
      .addPrimaryKeyConstraint("alert_finding_pk", ["tenant_id", "rule", "domain", "day"])
      .execute();
    await sql`create index alert_finding_pending on alert_finding (changed_at) where pending`.execute(db);
    // Findings about report days outside their rule's window: not raised, counted once per backlog.
    await db.schema
      .createTable("alert_skipped_finding")
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("rule", "text", (c) => c.notNull())
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("day", "text", (c) => c.notNull())
      .addColumn("recorded_at", "timestamptz", (c) => c.notNull())
      .addColumn("noticed", "boolean", (c) => c.notNull())
      .addPrimaryKeyConstraint("alert_skipped_finding_pk", ["tenant_id", "rule", "domain", "day"])
      .execute();
    await sql`create index alert_skipped_finding_unnoticed on alert_skipped_finding (tenant_id) where not noticed`.execute(
      db,
    );
    // Messages per domain, report day and source IP: a new sender's figures for its day.
    await db.schema
      .createTable("alert_source_day")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("day", "text", (c) => c.notNull())
      .addColumn("source_ip", "text", (c) => c.notNull())
      .addColumn("messages", "bigint", (c) => c.notNull())
      .addColumn("passed", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("alert_source_day_pk", ["domain", "day", "source_ip"])
      .execute();
  },
};
