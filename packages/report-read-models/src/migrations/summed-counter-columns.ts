import type { CreateTableBuilder } from "kysely";

/**
 * The summed counters every rollup has besides `dmarc_pass` (which agg_source keeps as a key).
 * Migrations that ran use it: it must not change (a new column is a new migration).
 */
// biome-ignore lint/suspicious/noExplicitAny: the builder's column names are not known here
export const summedCounterColumns = (table: CreateTableBuilder<string, any>) =>
  table
    .addColumn("volume", "bigint", (c) => c.notNull())
    .addColumn("unaligned_arc_pass", "bigint", (c) => c.notNull())
    .addColumn("dkim_aligned", "bigint", (c) => c.notNull())
    .addColumn("spf_aligned", "bigint", (c) => c.notNull())
    .addColumn("dkim_pass", "bigint", (c) => c.notNull())
    .addColumn("spf_pass", "bigint", (c) => c.notNull());
