import type { Kysely } from "kysely";
import { summedCounterColumns } from "./summed-counter-columns.js";

/**
 * The daily series (GET aggregate_by_date): messages per (policy domain, UTC day) with their
 * dispositions. Keyed by domain, not tenant, like agg_domain: a tenant's domains are resolved when
 * read, so a domain added later brings the days of the reports that came before it.
 */
export const aggDomainDay = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await summedCounterColumns(
      db.schema
        .createTable("agg_domain_day")
        .addColumn("domain", "text", (c) => c.notNull())
        .addColumn("day", "integer", (c) => c.notNull())
        .addColumn("dmarc_pass", "bigint", (c) => c.notNull()),
    )
      .addColumn("disposition_none", "bigint", (c) => c.notNull())
      .addColumn("disposition_quarantine", "bigint", (c) => c.notNull())
      .addColumn("disposition_reject", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("agg_domain_day_pk", ["domain", "day"])
      .execute();
  },
};
