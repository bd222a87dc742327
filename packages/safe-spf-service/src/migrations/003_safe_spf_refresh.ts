import type { Kysely } from "kysely";

export const safeSpfRefresh = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    // The refresher's schedule and its leases. Not a projection: "checked, unchanged" is no
    // event, so replay neither builds nor drops this table; a missing row is derived again
    // from safe_spf (last_computed + min_ttl), so the schedule survives anything.
    await db.schema
      .createTable("safe_spf_refresh")
      .addColumn("domain", "text", (c) => c.primaryKey())
      .addColumn("next_due", "timestamptz", (c) => c.notNull())
      .addColumn("last_checked", "timestamptz")
      .addColumn("valid_until", "timestamptz")
      .addColumn("failures", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("failure", "text")
      .addColumn("failing_since", "timestamptz")
      .addColumn("lease_owner", "text")
      .addColumn("lease_until", "timestamptz")
      .execute();
    await db.schema.createIndex("safe_spf_refresh_due").on("safe_spf_refresh").column("next_due").execute();
  },
};
