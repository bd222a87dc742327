import type { Kysely } from "kysely";

export const alertDigest = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    // One row per person, tenant and period, made before the mail is sent: its key is what makes a
    // digest go out once, however often the schedule runs.
    await db.schema
      .createTable("alert_digest")
      .addColumn("digest_id", "text", (c) => c.primaryKey())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("address", "text", (c) => c.notNull())
      .addColumn("period_start", "timestamptz", (c) => c.notNull())
      .addColumn("period_end", "timestamptz", (c) => c.notNull())
      .addColumn("subject", "text", (c) => c.notNull())
      .addColumn("text", "text", (c) => c.notNull())
      .addColumn("html", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("next_attempt_at", "timestamptz", (c) => c.notNull())
      .addColumn("last_error", "text")
      .addColumn("lease_until", "timestamptz")
      .addColumn("sent_at", "timestamptz")
      .execute();
  },
};
