import type { Kysely } from "kysely";

/**
 * SMTP TLS reports (RFC 8460), summed per key and part of a report's time (as agg_domain: a
 * report of at most 24 hours at its start, a longer one spread over its UTC days). Keyed by
 * policy domain, not tenant: a domain's owner is resolved when read (tenant-domain-filter.ts).
 * Absent text fields are "" so that they can be part of a key.
 */
export const tlsFacts = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("tls_policy_fact")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("policy_type", "text", (c) => c.notNull())
      .addColumn("t", "bigint", (c) => c.notNull())
      .addColumn("reports", "bigint", (c) => c.notNull())
      .addColumn("successful", "bigint", (c) => c.notNull())
      .addColumn("failed", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("tls_policy_fact_pk", ["domain", "policy_type", "t"])
      .execute();
    await db.schema
      .createTable("tls_failure_fact")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("policy_type", "text", (c) => c.notNull())
      .addColumn("result_type", "text", (c) => c.notNull())
      .addColumn("sending_mta_ip", "text", (c) => c.notNull())
      .addColumn("receiving_mx_hostname", "text", (c) => c.notNull())
      .addColumn("receiving_ip", "text", (c) => c.notNull())
      .addColumn("organization", "text", (c) => c.notNull())
      .addColumn("t", "bigint", (c) => c.notNull())
      .addColumn("failed", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("tls_failure_fact_pk", [
        "domain",
        "t",
        "policy_type",
        "result_type",
        "sending_mta_ip",
        "receiving_mx_hostname",
        "receiving_ip",
        "organization",
      ])
      .execute();
    // newestFactTime reads the latest t of each.
    await db.schema.createIndex("tls_policy_fact_t").on("tls_policy_fact").column("t").execute();
    await db.schema.createIndex("tls_failure_fact_t").on("tls_failure_fact").column("t").execute();
  },
};
