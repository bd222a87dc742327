import type { Kysely } from "kysely";

export const alertTlsState = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    // SMTP TLS sessions per tenant's domain and day: the totals under result_type "", the failed
    // sessions of each result type under its name (tls_failure_share, tls_new_result).
    await db.schema
      .createTable("alert_tls_day")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("day", "text", (c) => c.notNull())
      .addColumn("result_type", "text", (c) => c.notNull())
      .addColumn("successful", "bigint", (c) => c.notNull())
      .addColumn("failed", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("alert_tls_day_pk", ["domain", "day", "result_type"])
      .execute();
    // The failure result types each domain has seen: a new one is a finding.
    await db.schema
      .createTable("alert_tls_known_result")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("result_type", "text", (c) => c.notNull())
      .addColumn("first_seen", "timestamptz", (c) => c.notNull())
      .addPrimaryKeyConstraint("alert_tls_known_result_pk", ["domain", "result_type"])
      .execute();
  },
};
