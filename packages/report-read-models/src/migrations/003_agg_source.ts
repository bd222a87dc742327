import type { Kysely } from "kysely";
import { summedCounterColumns as counters } from "./summed-counter-columns.js";

export const aggSource = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await counters(
      db.schema
        .createTable("agg_source")
        .addColumn("domain", "text", (c) => c.notNull())
        .addColumn("source_ip", "text", (c) => c.notNull())
        .addColumn("organization", "text", (c) => c.notNull())
        .addColumn("t", "bigint", (c) => c.notNull())
        .addColumn("disposition", "text", (c) => c.notNull())
        .addColumn("arc", "text", (c) => c.notNull())
        .addColumn("spf_domain", "text", (c) => c.notNull())
        .addColumn("dkim_domain", "text", (c) => c.notNull())
        .addColumn("dmarc_pass", "boolean", (c) => c.notNull()),
    )
      .addPrimaryKeyConstraint("agg_source_pk", [
        "domain",
        "t",
        "source_ip",
        "organization",
        "disposition",
        "arc",
        "spf_domain",
        "dkim_domain",
        "dmarc_pass",
      ])
      .execute();
    await db.schema.createIndex("agg_source_by_t").on("agg_source").columns(["t", "domain"]).execute();
  },
};
