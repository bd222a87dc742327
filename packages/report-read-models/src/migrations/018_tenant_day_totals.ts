import { type Kysely, sql } from "kysely";

/**
 * The daily series of a whole tenant, kept (tenant-day-totals.ts): GET aggregate_by_date over all
 * of a tenant's domains summed agg_domain_day's row of every domain and day per request, 730,000
 * rows a year for 2,000 domains reported daily (317 ms alone, measured). The tenant's sums per day
 * are kept by an upkeep, and the days whose facts changed since are summed afresh per request:
 * - agg_domain_day.changed_seq: the batch of aggregate_by_date that last wrote the row, numbered
 *   in commit order by the one row of agg_domain_day_change (as agg_source_change does);
 * - tenant_day_total: per tenant and day, the sums of its report domains' rows as of the build;
 * - tenant_day_total_build: per tenant, the report domains counted and the batch number built at.
 */
export const tenantDayTotals = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await sql`alter table agg_domain_day add column changed_seq bigint not null default 0`.execute(db);
    // Only the rows written after a build are looked for: the few highest numbers.
    await sql`create index agg_domain_day_by_change on agg_domain_day (changed_seq)`.execute(db);
    await sql`create table agg_domain_day_change (single boolean primary key check (single),
      last_seq bigint not null)`.execute(db);
    await sql`insert into agg_domain_day_change (single, last_seq) values (true, 0)`.execute(db);
    await sql`create table tenant_day_total (tenant_id text not null, day integer not null,
      volume bigint not null, dmarc_pass bigint not null, unaligned_arc_pass bigint not null,
      dkim_aligned bigint not null, spf_aligned bigint not null, dkim_pass bigint not null,
      spf_pass bigint not null, disposition_none bigint not null, disposition_quarantine bigint not null,
      disposition_reject bigint not null, primary key (tenant_id, day))`.execute(db);
    await sql`create table tenant_day_total_build (tenant_id text primary key,
      report_domains text[] not null, built_seq bigint not null)`.execute(db);
  },
};
