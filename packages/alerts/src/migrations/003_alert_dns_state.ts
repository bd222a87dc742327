import type { Kysely } from "kysely";

export const alertDnsState = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    // What the periodic check of live DNS last saw per domain: a check is no event, so this is
    // the watch's own state, compared with the next check.
    await db.schema
      .createTable("alert_dns_state")
      .addColumn("domain", "text", (c) => c.primaryKey())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("dmarc_record", "text")
      .addColumn("spf_record", "text")
      .addColumn("problems", "text", (c) => c.notNull())
      .addColumn("checked_at", "timestamptz", (c) => c.notNull())
      .execute();
  },
};
