import { type Kysely, sql } from "kysely";

export const rankingExtentsAsOffsets = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    // The extents become distances from the bucket's edges. As absolute seconds, the
    // statistics of first_t span every ranking: for "first_t <= the first day of December"
    // the planner expected 400,000 of the December ranking's 466,000 groups (22,800 real) and
    // walked the whole ranking through the other index. As offsets, a day at the edge is a
    // small value in every ranking, and the estimate follows.
    await sql`alter table source_ranking add column start_offset bigint, add column end_offset bigint`.execute(
      db,
    );
    await sql`update source_ranking r set start_offset = r.first_t - b.bucket_start,
      end_offset = b.bucket_end - r.last_t
      from source_ranking_build b where b.ranking_id = r.ranking_id`.execute(db);
    // A ranking row without its build is unreachable; none should exist, but none may stay.
    await sql`delete from source_ranking where start_offset is null`.execute(db);
    await sql`alter table source_ranking alter column start_offset set not null,
      alter column end_offset set not null, drop column first_t, drop column last_t`.execute(db);
    await sql`create index source_ranking_by_start_offset on source_ranking (ranking_id, start_offset)`.execute(
      db,
    );
    await sql`create index source_ranking_by_end_offset on source_ranking (ranking_id, end_offset)`.execute(
      db,
    );
  },
};
