import { type Kysely, sql } from "kysely";

export const rankingExtents = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    // Rankings are derived and rebuilt by upkeep: the old ones have no extent, so they go.
    await sql`delete from source_ranking`.execute(db);
    await sql`delete from source_ranking_build`.execute(db);
    // The first and last second of a group's facts in the bucket. A period that ends or
    // starts inside the bucket leaves out the groups with facts at its edges: these indexes
    // find exactly them, with their sums, in one range each (looking each group up by its key
    // took 5 µs × 23,000 groups for one day left out at 10M rows).
    await sql`alter table source_ranking add column first_t bigint not null default 0,
      add column last_t bigint not null default 0`.execute(db);
    await sql`create index source_ranking_by_first_t on source_ranking (ranking_id, first_t)`.execute(db);
    await sql`create index source_ranking_by_last_t on source_ranking (ranking_id, last_t)`.execute(db);
  },
};
