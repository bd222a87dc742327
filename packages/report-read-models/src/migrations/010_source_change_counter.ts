import { type Kysely, sql } from "kysely";

export const sourceChangeCounter = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    // Builds read the latest batch number from one row instead of max(changed_seq) over all
    // of agg_source (a full scan: BRIN cannot answer max; 2 GB at 10M report rows, once per
    // build and per refresh). The row continues the numbers the sequence gave out.
    await sql`create table agg_source_change (single boolean primary key check (single),
      last_seq bigint not null)`.execute(db);
    await sql`insert into agg_source_change (single, last_seq)
      select true, coalesce(max(changed_seq), 0) from agg_source`.execute(db);
    await sql`drop sequence agg_source_change_seq`.execute(db);
  },
};
