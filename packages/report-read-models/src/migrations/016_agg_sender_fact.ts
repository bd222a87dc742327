import type { Kysely } from "kysely";
import { summedCounterColumns as counters } from "./summed-counter-columns.js";

export const aggSenderFact = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await counters(
      db.schema
        .createTable("agg_sender_fact")
        .addColumn("domain", "text", (c) => c.notNull())
        .addColumn("t", "bigint", (c) => c.notNull())
        .addColumn("source_ip", "text", (c) => c.notNull())
        .addColumn("disposition", "text", (c) => c.notNull())
        .addColumn("dmarc_pass", "boolean", (c) => c.notNull())
        .addColumn("forwarded", "boolean", (c) => c.notNull()),
    )
      .addPrimaryKeyConstraint("agg_sender_fact_pk", [
        "domain",
        "t",
        "source_ip",
        "disposition",
        "dmarc_pass",
        "forwarded",
      ])
      .execute();
  },
};
