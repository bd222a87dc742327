import { type RawBuilder, sql, type Transaction } from "kysely";
import { lastSourceChangeNumber } from "../projections/source-change-counter.js";
import type { ReportAndTenancySchema } from "../schema.js";
import { factsChangedSince, tenantScopedFacts } from "../source-facts.js";
import { tenantReportDomains } from "../tenant-domain-filter.js";
import { type Span, sameSpan, symmetricDifference } from "./buckets.js";
import {
  limitStatements,
  type RankingBuilt,
  type RankingTarget,
  tenantDomainCount,
} from "./build-ranking.js";
import type { RankingScope } from "./ranking-scope.js";

/** A ranking as its build row has it. */
export interface RankingState {
  rankingId: string;
  tenantId: string;
  scope: RankingScope;
  kind: "calendar" | "rolling";
  bucket: Span;
  anchor: Span;
  reportDomains: readonly string[];
  builtSeq: string;
  /** The tenant's number of domains when it was built or last caught up. */
  domainCount: number;
}

/** The largest bigint: an offset no group has, so that least() keeps the one it had. */
const noOffset = sql`9223372036854775807::bigint`;

/**
 * The rows of agg_source aliased `f` matching `where`, each with the sign it enters the catch-up
 * with: +1 for facts the ranking gains, -1 for facts it loses.
 */
const signedFacts = (sign: 1 | -1, where: RawBuilder<unknown>) => sql`
  select f.domain, f.source_ip, f.organization, ${sql.lit(sign)}::int as sign, f.t, f.volume,
    case when f.dmarc_pass then f.volume else 0 end as dmarc_volume, f.unaligned_arc_pass,
    f.dkim_aligned, f.spf_aligned, f.dkim_pass, f.spf_pass
  from agg_source f where ${where}`;

/**
 * Brings a ranking to what a build of `target` would hold now, at the cost of what changed, in one
 * repeatable-read snapshot (as a build): it adds the facts numbered after its build, moves a
 * rolling ranking on to `target` (the days it leaves taken out, the days it comes to added, from
 * the facts it had counted), adds the groups of report domains the tenant has gained and takes
 * out those of the ones it lost. Groups that lose facts have their edges read again from their
 * own facts (one index range each); groups left with none go. Returns null when the ranking was
 * dropped meanwhile.
 */
export async function catchUpRanking(
  trx: Transaction<ReportAndTenancySchema>,
  ranking: RankingState,
  target: Span,
  statementTimeoutMs: number,
): Promise<RankingBuilt | null> {
  const started = performance.now();
  await limitStatements(trx, statementTimeoutMs);
  const { rows: locked } = await sql<{ built_seq: string }>`
    select built_seq::text from source_ranking_build where ranking_id = ${ranking.rankingId} for update`.execute(
    trx,
  );
  if (!locked[0] || locked[0].built_seq !== ranking.builtSeq) return null;
  const id = ranking.rankingId;
  const seq = await lastSourceChangeNumber(trx);
  const now = await tenantReportDomains(trx, ranking.tenantId);
  const counted = new Set(ranking.reportDomains);
  const nowNames = new Set(now.map((d) => d.domain));
  const kept = now.filter((d) => counted.has(d.domain));
  const added = now.filter((d) => !counted.has(d.domain));
  const removed = ranking.reportDomains.filter((domain) => !nowNames.has(domain));
  const old = ranking.bucket;
  const inScope = ranking.scope === "unaligned" ? sql` and not f.dmarc_pass` : sql``;
  const keptScoped = tenantScopedFacts(kept, ranking.scope);
  const builtSeq = sql`${ranking.builtSeq}::bigint`;
  const within = (span: Span, outer: Span) => span.start >= outer.start && span.end <= outer.end;
  const differences = sameSpan(old, target) ? [] : symmetricDifference(old, target);
  const entering = differences.filter((span) => within(span, target));
  const leaving = differences.filter((span) => within(span, old));
  const inSpan = (span: Span) => sql`f.t between ${span.start} and ${span.end}`;

  let changedGroups = 0;
  let groupCountChange = 0;
  if (removed.length > 0) {
    const gone = await sql`delete from source_ranking where ranking_id = ${id}
      and domain = any(${removed}::text[])`.execute(trx);
    changedGroups += Number(gone.numAffectedRows ?? 0n);
    groupCountChange -= Number(gone.numAffectedRows ?? 0n);
  }
  const parts = [
    ...(kept.length > 0
      ? [signedFacts(1, factsChangedSince(kept, ranking.scope, target, ranking.builtSeq))]
      : []),
    ...(kept.length > 0
      ? entering.map((span) =>
          signedFacts(1, sql`${keptScoped} and ${inSpan(span)} and f.changed_seq <= ${builtSeq}`),
        )
      : []),
    ...(kept.length > 0
      ? leaving.map((span) =>
          signedFacts(-1, sql`${keptScoped} and ${inSpan(span)} and f.changed_seq <= ${builtSeq}`),
        )
      : []),
    ...(added.length > 0
      ? [signedFacts(1, sql`${tenantScopedFacts(added, ranking.scope)} and ${inSpan(target)}`)]
      : []),
  ];
  if (parts.length > 0) {
    await sql`create temp table ranking_delta on commit drop as
      select p.domain, p.source_ip, p.organization, sum(p.sign * p.volume) as volume,
        sum(p.sign * p.dmarc_volume) as dmarc_pass, sum(p.sign * p.unaligned_arc_pass) as unaligned_arc_pass,
        sum(p.sign * p.dkim_aligned) as dkim_aligned, sum(p.sign * p.spf_aligned) as spf_aligned,
        sum(p.sign * p.dkim_pass) as dkim_pass, sum(p.sign * p.spf_pass) as spf_pass, sum(p.sign) as facts,
        min(p.t) filter (where p.sign > 0) as first_t, max(p.t) filter (where p.sign > 0) as last_t,
        bool_or(p.sign < 0) as lost
      from (${sql.join(parts, sql` union all `)}) p
      group by p.domain, p.source_ip, p.organization`.execute(trx);
    const { rows: merged } = await sql<{ inserted: number; changed: number }>`
      with written as (
        insert into source_ranking as r (ranking_id, domain, source_ip, organization, volume, dmarc_pass,
          unaligned_arc_pass, dkim_aligned, spf_aligned, dkim_pass, spf_pass, facts, start_offset, end_offset)
        select ${id}::bigint, d.domain, d.source_ip, d.organization, d.volume, d.dmarc_pass,
          d.unaligned_arc_pass, d.dkim_aligned, d.spf_aligned, d.dkim_pass, d.spf_pass, d.facts,
          coalesce(d.first_t - ${ranking.anchor.start}, ${noOffset}),
          coalesce(${ranking.anchor.end} - d.last_t, ${noOffset})
        from ranking_delta d
        on conflict (ranking_id, domain, source_ip, organization) do update set
          volume = r.volume + excluded.volume, dmarc_pass = r.dmarc_pass + excluded.dmarc_pass,
          unaligned_arc_pass = r.unaligned_arc_pass + excluded.unaligned_arc_pass,
          dkim_aligned = r.dkim_aligned + excluded.dkim_aligned, spf_aligned = r.spf_aligned + excluded.spf_aligned,
          dkim_pass = r.dkim_pass + excluded.dkim_pass, spf_pass = r.spf_pass + excluded.spf_pass,
          facts = r.facts + excluded.facts,
          start_offset = least(r.start_offset, excluded.start_offset),
          end_offset = least(r.end_offset, excluded.end_offset)
        returning (xmax = 0) as inserted
      )
      select (count(*) filter (where inserted))::int as inserted, count(*)::int as changed from written`.execute(
      trx,
    );
    changedGroups += merged[0]?.changed ?? 0;
    groupCountChange += merged[0]?.inserted ?? 0;
    // The groups that lost facts: their first and last fact in the bucket may have gone with
    // them. Read again from their own facts (agg_source's key starts with the group).
    await sql`update source_ranking r set start_offset = e.first_t - ${ranking.anchor.start},
        end_offset = ${ranking.anchor.end} - e.last_t
      from (
        select d.domain, d.source_ip, d.organization, x.first_t, x.last_t
        from ranking_delta d
        cross join lateral (
          select min(f.t) as first_t, max(f.t) as last_t from agg_source f
          where f.domain = d.domain and f.source_ip = d.source_ip and f.organization = d.organization
            and ${inSpan(target)}${inScope}
        ) x
        where d.lost and x.first_t is not null
      ) e
      where r.ranking_id = ${id} and r.domain = e.domain and r.source_ip = e.source_ip
        and r.organization = e.organization`.execute(trx);
    const emptied = await sql`delete from source_ranking r using ranking_delta d
      where d.lost and r.ranking_id = ${id} and r.domain = d.domain and r.source_ip = d.source_ip
        and r.organization = d.organization and r.facts <= 0`.execute(trx);
    groupCountChange -= Number(emptied.numAffectedRows ?? 0n);
  }
  const domainCount = await tenantDomainCount(trx, ranking.tenantId);
  await sql`update source_ranking_build set bucket_start = ${target.start}, bucket_end = ${target.end},
      built_seq = ${seq}::bigint, report_domains = ${[...nowNames].sort()}::text[],
      domain_count = ${domainCount}, group_count = group_count + ${groupCountChange}, built_at = now()
    where ranking_id = ${id}`.execute(trx);
  const result: RankingTarget = {
    tenantId: ranking.tenantId,
    scope: ranking.scope,
    kind: ranking.kind,
    bucket: target,
  };
  return { ...result, outcome: "caught_up", groups: changedGroups, ms: performance.now() - started };
}
