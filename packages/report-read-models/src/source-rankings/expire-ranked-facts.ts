import { sql, type Transaction } from "kysely";
import type { ReportSchema } from "../schema.js";
import { upkeepLock } from "./maintain-source-rankings.js";

/** The agg_source rows aliased `f` that ranking `b` counted: its domains, bucket, scope, up to its build. */
const countedBy = sql`f.domain = any(b.report_domains) and f.t between b.bucket_start and b.bucket_end
  and f.changed_seq <= b.built_seq and (b.scope <> 'unaligned' or not f.dmarc_pass)`;

/**
 * Keeps the by-source rankings what a build would hold while `dropFacts` deletes the facts of
 * `domains` before `cutoff` (retention: AggregateFactsExpired). A ranking holds the sums of the
 * facts of its report domains in its bucket numbered up to its build (`built_seq`); of those that
 * go, each ranking they reach loses exactly their sums and count per group, the groups that lost
 * facts have their first and last second read again from the facts they keep, and groups left
 * with none go. A ranking all of whose facts go (its bucket before the cutoff, its domains among
 * those) is dropped whole. The rankings' upkeep is the only other writer: it is waited for (its
 * advisory lock, which it holds for a round; a round that starts meanwhile skips its turn).
 * The cost is that of the facts that go, read once per ranking whose bucket holds them.
 */
export async function subtractExpiredFromRankings(
  trx: Transaction<ReportSchema>,
  domains: readonly string[],
  cutoff: number,
  dropFacts: () => Promise<void>,
): Promise<void> {
  await sql`select pg_advisory_xact_lock(${upkeepLock})`.execute(trx);
  const { rows: reached } = await sql<{ ranking_id: string; bucket_end: string; report_domains: string[] }>`
    select ranking_id::text, bucket_end::text, report_domains from source_ranking_build
    where report_domains && ${domains}::text[] and bucket_start < ${cutoff}
    order by ranking_id for update`.execute(trx);
  const expiring = new Set(domains);
  const emptied = reached.filter(
    (b) => Number(b.bucket_end) < cutoff && b.report_domains.every((domain) => expiring.has(domain)),
  );
  if (emptied.length > 0) {
    const ids = emptied.map((b) => b.ranking_id);
    await sql`delete from source_ranking where ranking_id = any(${ids}::bigint[])`.execute(trx);
    await sql`delete from source_ranking_build where ranking_id = any(${ids}::bigint[])`.execute(trx);
  }
  const trimmed = reached.filter((b) => !emptied.includes(b)).map((b) => b.ranking_id);
  if (trimmed.length === 0) {
    await dropFacts();
    return;
  }
  // Two expiries in one batch: the second makes the table again.
  await sql`drop table if exists expired_ranked`.execute(trx);
  await sql`create temp table expired_ranked on commit drop as
    select b.ranking_id, f.domain, f.source_ip, f.organization, sum(f.volume) as volume,
      coalesce(sum(f.volume) filter (where f.dmarc_pass), 0) as dmarc_pass,
      sum(f.unaligned_arc_pass) as unaligned_arc_pass, sum(f.dkim_aligned) as dkim_aligned,
      sum(f.spf_aligned) as spf_aligned, sum(f.dkim_pass) as dkim_pass, sum(f.spf_pass) as spf_pass,
      count(*) as facts
    from source_ranking_build b
    join agg_source f on ${countedBy} and f.domain = any(${domains}::text[]) and f.t < ${cutoff}
    where b.ranking_id = any(${trimmed}::bigint[])
    group by b.ranking_id, f.domain, f.source_ip, f.organization`.execute(trx);
  // Without statistics the planner takes the table for a few rows and walks the rankings for each.
  await sql`analyze expired_ranked`.execute(trx);
  await dropFacts();
  // Groups all of whose counted facts went: out of their ranking.
  await sql`with gone as (
      delete from source_ranking r using expired_ranked e
      where r.ranking_id = e.ranking_id and r.domain = e.domain and r.source_ip = e.source_ip
        and r.organization = e.organization and r.facts <= e.facts
      returning r.ranking_id
    )
    update source_ranking_build b set group_count = b.group_count - g.n
    from (select ranking_id, count(*) as n from gone group by ranking_id) g
    where b.ranking_id = g.ranking_id`.execute(trx);
  // The others lose the sums, in one write with their edges: the facts a group lost were its
  // first ones, so its first second (and, when the bucket ends before the cutoff, its last) is
  // read again from the facts it keeps (agg_source's key starts with the group).
  await sql`update source_ranking r set volume = r.volume - e.volume, dmarc_pass = r.dmarc_pass - e.dmarc_pass,
      unaligned_arc_pass = r.unaligned_arc_pass - e.unaligned_arc_pass,
      dkim_aligned = r.dkim_aligned - e.dkim_aligned, spf_aligned = r.spf_aligned - e.spf_aligned,
      dkim_pass = r.dkim_pass - e.dkim_pass, spf_pass = r.spf_pass - e.spf_pass, facts = r.facts - e.facts,
      start_offset = coalesce(x.first_t - b.anchor_start, r.start_offset),
      end_offset = coalesce(b.anchor_end - x.last_t, r.end_offset)
    from expired_ranked e
    join source_ranking_build b on b.ranking_id = e.ranking_id
    cross join lateral (
      select min(f.t) as first_t, max(f.t) as last_t from agg_source f
      where f.domain = e.domain and f.source_ip = e.source_ip and f.organization = e.organization
        and ${countedBy}
    ) x
    where r.ranking_id = e.ranking_id and r.domain = e.domain and r.source_ip = e.source_ip
      and r.organization = e.organization`.execute(trx);
}
