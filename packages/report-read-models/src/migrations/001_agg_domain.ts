import type { Kysely } from "kysely";

export const aggDomain = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("agg_domain")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("t", "bigint", (c) => c.notNull())
      .addColumn("volume", "bigint", (c) => c.notNull())
      .addColumn("dmarc_pass", "bigint", (c) => c.notNull())
      .addColumn("unaligned_arc_pass", "bigint", (c) => c.notNull())
      .addColumn("dkim_aligned", "bigint", (c) => c.notNull())
      .addColumn("spf_aligned", "bigint", (c) => c.notNull())
      .addColumn("dkim_pass", "bigint", (c) => c.notNull())
      .addColumn("spf_pass", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("agg_domain_pk", ["domain", "t"])
      .execute();
    await db.schema.createIndex("agg_domain_by_t").on("agg_domain").columns(["t", "domain"]).execute();
  },
};
