import type { Kysely } from "kysely";
import { summedCounterColumns as counters } from "./summed-counter-columns.js";

export const aggOrganization = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await counters(
      db.schema
        .createTable("agg_organization")
        .addColumn("domain", "text", (c) => c.notNull())
        .addColumn("organization", "text", (c) => c.notNull())
        .addColumn("t", "bigint", (c) => c.notNull())
        .addColumn("dmarc_pass", "bigint", (c) => c.notNull()),
    )
      .addPrimaryKeyConstraint("agg_organization_pk", ["domain", "organization", "t"])
      .execute();
    await db.schema
      .createIndex("agg_organization_by_t")
      .on("agg_organization")
      .columns(["t", "domain"])
      .execute();
  },
};
