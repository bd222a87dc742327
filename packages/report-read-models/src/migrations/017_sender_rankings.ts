import { type Kysely, sql } from "kysely";

/**
 * Sender rankings (sender-rankings/): per tenant and standard bucket, the sums of every (tenant's
 * domain, sender) and of every (tenant's domain, source IP) behind them, so that a page of
 * aggregate_by_sender or policy_impact is a walk along an index instead of a grouping of the
 * period's facts. A query trusts one only when nothing it depends on changed since its build:
 * - agg_sender_change: per (report domain, UTC day) the number of the last batch of
 *   aggregate_by_sender that wrote facts there (the counter row numbers the batches in commit
 *   order, as agg_source_change does);
 * - source_ip_name.named_seq: the number of the last batch of source_ip_names that changed what
 *   names an address's sender (service, base domain, AS, their types and country), from the
 *   counter row source_ip_name_change, whose epoch changes when a replay starts it afresh.
 */
export const senderRankings = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await sql`create table agg_sender_change_counter (single boolean primary key check (single),
      last_seq bigint not null)`.execute(db);
    // `facts`: how many fact rows the batches wrote there (an upsert into an existing row counts
    // again): whether a bucket holds enough facts to deserve a ranking is read here.
    await sql`create table agg_sender_change (domain text not null, day integer not null,
      seq bigint not null, facts bigint not null, primary key (domain, day))`.execute(db);
    // Only the changes after a build are looked for: the few highest numbers.
    await sql`create index agg_sender_change_by_seq on agg_sender_change (seq)`.execute(db);
    // Facts projected before this migration: one change row per (domain, day), numbered 1, so
    // that the upkeep sees their days (a ranking is built after, at a higher number).
    await sql`insert into agg_sender_change (domain, day, seq, facts)
      select domain, (t / 86400)::integer, 1, count(*) from agg_sender_fact group by 1, 2`.execute(db);
    await sql`insert into agg_sender_change_counter (single, last_seq) values (true, 1)`.execute(db);

    await sql`create table source_ip_name_change (single boolean primary key check (single),
      epoch text not null, last_seq bigint not null)`.execute(db);
    await sql`alter table source_ip_name add column named_seq bigint not null default 0`.execute(db);
    await sql`create index source_ip_name_by_named_seq on source_ip_name (named_seq)`.execute(db);

    await sql`create sequence sender_ranking_id_seq`.execute(db);
    await sql`create table sender_ranking_build (
      build_id bigint primary key,
      tenant_id text not null,
      kind text not null,
      bucket_start bigint not null,
      bucket_end bigint not null,
      -- "report domain owner" pairs, sorted: the tenant's domain set the ranking counted.
      report_domains text[] not null,
      built_seq bigint not null,
      name_epoch text not null,
      built_name_seq bigint not null,
      built_at timestamptz not null default now(),
      -- Totals: groups and sums over the whole bucket (all facts, then failing facts that
      -- p=quarantine and p=reject would stop).
      groups bigint not null, volume bigint not null, dmarc_pass bigint not null,
      groups_quarantine bigint not null, stopped_quarantine bigint not null,
      forwarded_quarantine bigint not null,
      groups_reject bigint not null, stopped_reject bigint not null, forwarded_reject bigint not null
    )`.execute(db);
    await sql`create index sender_ranking_build_by_tenant on sender_ranking_build (tenant_id, bucket_start)`.execute(
      db,
    );
    const sums = sql`volume bigint not null, dmarc_pass bigint not null, unaligned_arc_pass bigint not null,
      dkim_aligned bigint not null, spf_aligned bigint not null, dkim_pass bigint not null,
      spf_pass bigint not null, forwarded bigint not null,
      stopped_quarantine bigint not null, forwarded_quarantine bigint not null,
      stopped_reject bigint not null, forwarded_reject bigint not null`;
    // With the address's naming as the build read it (a ranking is used only while no address
    // it holds was named otherwise): a page with decided ranges reads it, not source_ip_name.
    await sql`create table sender_ranking_ip (build_id bigint not null, owner text not null,
      source_ip text not null, address inet, sender text not null, kind text not null,
      service_type text not null, asn text not null, asn_organization text not null,
      country text not null, ${sums})`.execute(db);
    // A page's senders' addresses (their picks and approvals); the addresses renamed since the
    // build; the addresses in a decided range.
    await sql`create index sender_ranking_ip_by_sender on sender_ranking_ip (build_id, owner, sender)`.execute(
      db,
    );
    await sql`create index sender_ranking_ip_by_ip on sender_ranking_ip (build_id, source_ip)`.execute(db);
    await sql`create index sender_ranking_ip_by_address on sender_ranking_ip (build_id, owner, address)`.execute(
      db,
    );
    await sql`create table sender_ranking (build_id bigint not null, owner text not null,
      sender text not null, source_ips bigint not null, ips_quarantine bigint not null,
      ips_reject bigint not null, ${sums}, primary key (build_id, owner, sender))`.execute(db);
    // Per (domain, sender) and scope ("all", "quarantine", "reject"), what a record shows besides
    // its sums, picked at the build over the addresses with messages in the scope: the kind, and
    // the ServiceType, ASN, organisation and country with the most of those messages. A page
    // reads these 100 rows instead of its senders' thousands of addresses.
    await sql`create table sender_ranking_pick (build_id bigint not null, scope text not null,
      owner text not null, sender text not null, kind text not null, service_type text not null,
      asn text not null, asn_organization text not null, country text not null,
      primary key (build_id, scope, owner, sender))`.execute(db);
    // The APIs' orders, so that a page is a walk along an index (backwards for the last pages).
    await sql`create index sender_ranking_by_volume on sender_ranking
      (build_id, volume desc, owner collate "C", sender collate "C")`.execute(db);
    await sql`create index sender_ranking_by_quarantine on sender_ranking
      (build_id, stopped_quarantine desc, owner collate "C", sender collate "C") where stopped_quarantine > 0`.execute(
      db,
    );
    await sql`create index sender_ranking_by_reject on sender_ranking
      (build_id, stopped_reject desc, owner collate "C", sender collate "C") where stopped_reject > 0`.execute(
      db,
    );
  },
};
