import { type Kysely, sql } from "kysely";

/**
 * The by-source rankings kept up in proportion to what changed (issue 21): agg_source becomes a
 * log of what each projection batch added (its rows are written once, never updated, so a
 * ranking adds the rows numbered after its build instead of summing changed groups again over
 * their whole bucket); agg_source_count says how many facts a domain has on a day (whether a
 * bucket is worth a ranking, without counting agg_source); source_ranking_upkeep says up to
 * which batch number the upkeep has looked at changes. Builds record their kind (a calendar
 * bucket, or a rolling one that moves on by a day at a time), the anchor their offsets are
 * measured from (a rolling bucket moves; its rows' offsets do not), and the report domains they
 * counted. The rankings made before are dropped: the next upkeep builds them again, once, from
 * every fact.
 */
export const rankingUpkeepByChange = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await sql`alter table agg_source drop constraint agg_source_pk`.execute(db);
    await sql`alter table agg_source add constraint agg_source_pk primary key
      (domain, source_ip, organization, t, disposition, arc, spf_domain, dkim_domain, dmarc_pass, changed_seq)
      include (volume)`.execute(db);

    await sql`create table agg_source_count (domain text not null, t bigint not null,
      facts bigint not null, unaligned_facts bigint not null, primary key (domain, t))`.execute(db);
    await sql`insert into agg_source_count (domain, t, facts, unaligned_facts)
      select domain, t, count(*), count(*) filter (where not dmarc_pass) from agg_source group by domain, t`.execute(
      db,
    );

    await sql`truncate source_ranking, source_ranking_build`.execute(db);
    await sql`alter table source_ranking_build
      add column kind text not null check (kind in ('calendar', 'rolling')),
      add column anchor_start bigint not null,
      add column anchor_end bigint not null,
      add column report_domains text[] not null`.execute(db);
    await sql`create table source_ranking_upkeep (single boolean primary key check (single),
      checked_seq bigint not null)`.execute(db);
    // From the first batch: the rankings dropped above are built again from every fact, once.
    await sql`insert into source_ranking_upkeep (single, checked_seq) values (true, 0)`.execute(db);
  },
};
