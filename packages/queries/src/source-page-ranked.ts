import type { RankingScope, TenantReportDomain } from "@dmarc-ledger/report-read-models";
import {
  factsChangedSince,
  type Span,
  secondsIn,
  sourceFactSums,
  symmetricDifference,
  tenantDomainCount,
  tenantScopedFacts,
} from "@dmarc-ledger/report-read-models";
import { type Kysely, sql } from "kysely";
import { offsetOf, type PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";
import {
  type SourceGroupSums,
  sourceOrder,
  sourceSumsAsText,
  sourceSumColumns as sumColumns,
} from "./source-group-sums.js";

export interface RankingChoice {
  rankingId: string;
  builtSeq: string;
  groupCount: number;
  bucket: Span;
  /** What the ranking's start_offset and end_offset are measured from (a rolling ranking moves on; they do not). */
  anchor: Span;
  /** The seconds in the period but not the bucket, or in the bucket but not the period. */
  differences: Span[];
}

/**
 * A ranking is worth using when it differs from the period by at most this share of the period:
 * the groups with facts in the difference are corrected one by one, so the work grows with it.
 */
const maxDifferenceShare = 0.25;

/** The tenant's current ranking closest to the period, or null when none is close enough. */
export async function chooseRanking(
  db: Kysely<QuerySchema>,
  query: PageQuery,
  scope: RankingScope,
): Promise<RankingChoice | null> {
  const builds = await db
    .selectFrom("source_ranking_build")
    .selectAll()
    .where("tenant_id", "=", query.tenantId)
    .where("scope", "=", scope)
    .where("bucket_start", "<=", query.end)
    .where("bucket_end", ">=", query.start)
    .execute();
  if (builds.length === 0) return null;
  const domainCount = await tenantDomainCount(db, query.tenantId);
  const period = { start: query.start, end: query.end };
  let best: RankingChoice | null = null;
  for (const build of builds) {
    if (build.domain_count !== domainCount) continue;
    const bucket = { start: Number(build.bucket_start), end: Number(build.bucket_end) };
    const differences = symmetricDifference(period, bucket);
    if (best && secondsIn(differences) >= secondsIn(best.differences)) continue;
    best = {
      rankingId: String(build.ranking_id),
      builtSeq: String(build.built_seq),
      groupCount: Number(build.group_count),
      bucket,
      anchor: { start: Number(build.anchor_start), end: Number(build.anchor_end) },
      differences,
    };
  }
  if (!best) return null;
  return secondsIn(best.differences) <= maxDifferenceShare * (query.end - query.start + 1) ? best : null;
}

/**
 * A page of source groups from a ranking, exact for the period:
 * - a group with no fact in the bucket changed since the build, and none where period and bucket
 *   differ, has the ranking's sums;
 * - a group with facts only where they differ (and none changed) has the ranking's sums plus its
 *   facts in the period outside the bucket, minus its facts in the bucket outside the period;
 * - a group with a fact in the bucket changed since the build is summed afresh over the period.
 * The first kind is nearly all of them and stays in the ranking's order, so the page is a walk
 * along the ranking's index, from the top for the first half of the pages and from the bottom for
 * the second, merged with the few others. Only the facts where period and bucket differ, and the
 * changed groups' facts, are read; the ranked sums of the second kind come from one range of
 * start_offset or end_offset (the table is stored by start_offset), not from a lookup per group.
 *
 * The groups that differ are summed once into a temporary table; the page then walks the index
 * with a constant limit (a limit the planner cannot see tempts it to sort the whole ranking).
 */
export async function rankedSourcePage(
  db: Kysely<QuerySchema>,
  query: PageQuery,
  scope: RankingScope,
  choice: RankingChoice,
  domains: readonly TenantReportDomain[],
): Promise<{ total: number; rows: SourceGroupSums[] }> {
  const offset = offsetOf(query);
  const limit = query.perPage;
  const { bucket } = choice;
  const sameGroup = (a: string, b: string) =>
    sql`${sql.ref(`${a}.domain`)} = ${sql.ref(`${b}.domain`)} and ${sql.ref(`${a}.source_ip`)} = ${sql.ref(`${b}.source_ip`)}
      and ${sql.ref(`${a}.organization`)} = ${sql.ref(`${b}.organization`)}`;
  const scoped = tenantScopedFacts(domains, scope);
  const inPeriod = sql`f.t between ${query.start} and ${query.end}${scope === "unaligned" ? sql` and not f.dmarc_pass` : sql``}`;
  const inBucket = (span: Span) => span.start >= bucket.start && span.end <= bucket.end;
  const leftOut = choice.differences.filter(inBucket);
  const added = choice.differences.filter((span) => !inBucket(span));
  // The ranked groups with a fact in a span the period leaves out of the bucket. Such a span is
  // at an edge of the bucket, so they are one range of start_offset or end_offset away (a group
  // with a fact at t has anchor.start + start_offset <= t <= anchor.end - end_offset). Only the
  // bound that selects is written: given both, the planner may range over the other index.
  const fromStart = (t: number) => t - choice.anchor.start;
  const fromEnd = (t: number) => choice.anchor.end - t;
  const groupsWithFactsIn = (span: Span) =>
    span.start === bucket.start
      ? sql`r.start_offset <= ${fromStart(span.end)}`
      : span.end === bucket.end
        ? sql`r.end_offset <= ${fromEnd(span.start)}`
        : sql`(r.start_offset <= ${fromStart(span.end)} and r.end_offset <= ${fromEnd(span.start)})`;
  const atLeftOutEdges =
    leftOut.length > 0 ? sql`(${sql.join(leftOut.map(groupsWithFactsIn), sql` or `)})` : sql`false`;
  // Facts changed since the build are rare: when there are none, the statement leaves them out.
  const changedFacts = factsChangedSince(domains, scope, bucket, choice.builtSeq);
  const { rows: changes } = await sql<{ any: boolean }>`select exists (
      select 1 from agg_source f where ${changedFacts}
    ) as any`.execute(db);
  const anyChanged = changes[0]?.any === true;

  const rankedRows = (alias: string) => sql`${sumColumns(alias)}, true as ranked`;
  // Every part below is a row per group or fact: summed by group, they are the group's exact sums
  // over the period. Ranked sums enter once per group; facts outside the bucket add, facts in it
  // outside the period subtract (their count too: a group is in the period while it has a fact).
  const parts = [
    ...(leftOut.length > 0
      ? [
          sql`select ${rankedRows("r")} from source_ranking r
            where r.ranking_id = ${choice.rankingId} and ${atLeftOutEdges}`,
        ]
      : []),
    ...choice.differences.map((span) => {
      const sign = sql.lit(inBucket(span) ? -1 : 1);
      const signed = (column: string) => sql`${sign} * f.${sql.ref(column)}`;
      return sql`select f.domain, f.source_ip, f.organization, ${signed("volume")},
          case when f.dmarc_pass then ${signed("volume")} else 0 end, ${signed("unaligned_arc_pass")},
          ${signed("dkim_aligned")}, ${signed("spf_aligned")}, ${signed("dkim_pass")}, ${signed("spf_pass")},
          ${sign}::bigint, false
        from agg_source f where ${scoped} and f.t between ${span.start} and ${span.end}`;
    }),
    // Groups with facts only outside the bucket may be ranked or not: those are looked up by key,
    // once each (a period may reach past both ends of the bucket).
    ...(added.length > 0
      ? [
          sql`select ${rankedRows("r")}
        from (select distinct f.domain, f.source_ip, f.organization from agg_source f
          where ${scoped} and (${sql.join(
            added.map((span) => sql`f.t between ${span.start} and ${span.end}`),
            sql` or `,
          )})) a
        cross join lateral (
          select r.* from source_ranking r
          where r.ranking_id = ${choice.rankingId} and ${sameGroup("r", "a")} and not ${atLeftOutEdges}
          -- Kept a subquery: looked up for each group, never joined by scanning the ranking.
          offset 0
        ) r`,
        ]
      : []),
  ];
  const ctes = sql.join(
    [
      ...(anyChanged
        ? [
            sql`changed as materialized (
              select distinct f.domain, f.source_ip, f.organization from agg_source f where ${changedFacts}
            )`,
          ]
        : []),
      sql`corrected as materialized (
      ${
        parts.length === 0
          ? sql`select null::text as domain, null::text as source_ip, null::text as organization,
              0::numeric as volume, 0::numeric as dmarc_pass, 0::numeric as unaligned_arc_pass,
              0::numeric as dkim_aligned, 0::numeric as spf_aligned, 0::numeric as dkim_pass,
              0::numeric as spf_pass, 0::numeric as facts, false as ranked where false`
          : sql`select x.domain, x.source_ip, x.organization, sum(x.volume) as volume,
              sum(x.dmarc_pass) as dmarc_pass, sum(x.unaligned_arc_pass) as unaligned_arc_pass,
              sum(x.dkim_aligned) as dkim_aligned, sum(x.spf_aligned) as spf_aligned,
              sum(x.dkim_pass) as dkim_pass, sum(x.spf_pass) as spf_pass, sum(x.facts) as facts,
              bool_or(x.ranked) as ranked
            from (${sql.join(parts, sql` union all `)}) as x (domain, source_ip, organization, volume,
              dmarc_pass, unaligned_arc_pass, dkim_aligned, spf_aligned, dkim_pass, spf_pass, facts, ranked)
            ${anyChanged ? sql`where not exists (select 1 from changed k where ${sameGroup("k", "x")})` : sql``}
            group by x.domain, x.source_ip, x.organization`
      }
    )`,
      ...(anyChanged
        ? [
            sql`recomputed as materialized (
              select ${sourceFactSums} from agg_source f
              join changed k on ${sameGroup("f", "k")}
              where ${inPeriod}
              group by f.domain, f.source_ip, f.organization
            )`,
          ]
        : []),
    ],
    sql`,
`,
  );
  const changedGroups = sql`
    union all
    select n.domain, n.source_ip, n.organization, n.volume, n.dmarc_pass, n.unaligned_arc_pass,
      n.dkim_aligned, n.spf_aligned, n.dkim_pass, n.spf_pass, n.facts,
      exists (select 1 from source_ranking r where r.ranking_id = ${choice.rankingId} and ${sameGroup("r", "n")}) as ranked
    from recomputed n
    union all
    -- Changed groups with no fact left in the period still displace their ranked sums.
    select k.domain, k.source_ip, k.organization, 0, 0, 0, 0, 0, 0, 0, 0, true
    from changed k
    where not exists (select 1 from recomputed n where ${sameGroup("n", "k")})
      and exists (select 1 from source_ranking r where r.ranking_id = ${choice.rankingId} and ${sameGroup("r", "k")})`;

  // The groups whose sums differ from the ranking's, summed once into a table of this
  // transaction: the count and the page both read it.
  await sql`create temporary table touched_group on commit drop as
    with ${ctes}
    select c.domain, c.source_ip, c.organization, c.volume, c.dmarc_pass, c.unaligned_arc_pass,
      c.dkim_aligned, c.spf_aligned, c.dkim_pass, c.spf_pass, c.facts, c.ranked
    from corrected c
    ${anyChanged ? changedGroups : sql``}`.execute(db);
  // The walk probes it for each ranked group it passes. A hash index on the address (a group or
  // two per address): a key B-tree sorts the text keys first, 30 ms for 23,000 groups.
  await sql`create index on touched_group using hash (source_ip)`.execute(db);
  const { rows: counts } = await sql<{ displaced: string; added: string }>`
    select (count(*) filter (where ranked))::text as displaced, (count(*) filter (where facts > 0))::text as added
    from touched_group`.execute(db);
  // Ranked groups whose sums are replaced, and the groups (some of them the same) that replace them.
  const total = choice.groupCount - Number(counts[0]!.displaced) + Number(counts[0]!.added);
  if (offset >= total) return { total, rows: [] };

  // The middle of the list costs the most either way: an offset walk of half the groups.
  const backward = offset + limit / 2 > total / 2;
  // From the bottom, positions [offset, offset + limit) from the top are [total - offset - limit, total - offset).
  const wanted = backward ? total - offset : offset + limit;
  const direction = backward ? "backward" : "forward";
  const { rows } = await sql<SourceGroupSums>`
    with walked as (
      select ${sumColumns("r")} from source_ranking r
      where r.ranking_id = ${choice.rankingId}
        and not exists (select 1 from touched_group t where ${sameGroup("t", "r")})
      order by ${sourceOrder("r", direction)}
      limit ${wanted}
    ),
    merged as (
      select ${sumColumns("w")} from walked w
      union all
      select ${sumColumns("t")} from touched_group t where t.facts > 0
    )
    select ${sourceSumsAsText("m")} from merged m
    order by ${sourceOrder("m", direction)}
    limit ${backward ? Math.min(limit, total - offset) : limit}
    offset ${backward ? Math.max(0, total - offset - limit) : offset}`.execute(db);
  if (backward) rows.reverse();
  return { total, rows };
}
