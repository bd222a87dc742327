import { type Kysely, sql } from "kysely";
import type { ReadModelSchema } from "../schema.js";
import { type Span, secondsIn, symmetricDifference } from "../source-rankings/buckets.js";
import { tenantDomainCount } from "../source-rankings/maintain-source-rankings.js";
import type { RankingScope } from "../source-rankings/ranking-scope.js";
import { offsetOf, type PageQuery } from "./page.js";
import { tenantScopedFacts } from "./source-facts.js";
import {
  type SourceGroupSums,
  sourceFactSums,
  sourceOrder,
  sourceSumsAsText,
  sourceSumColumns as sumColumns,
} from "./source-group-sums.js";

export interface RankingChoice {
  rankingId: string;
  builtSeq: string;
  groupCount: number;
  bucket: Span;
  /** The seconds in the period but not the bucket, or in the bucket but not the period. */
  differences: Span[];
}

/**
 * A ranking is worth using when it differs from the period by at most this share of the period:
 * the groups with facts in the difference are recomputed, so the work grows with it.
 */
const maxDifferenceShare = 0.25;

/** The tenant's current ranking closest to the period, or null when none is close enough. */
export async function chooseRanking(
  db: Kysely<ReadModelSchema>,
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
      differences,
    };
  }
  if (!best) return null;
  return secondsIn(best.differences) <= maxDifferenceShare * (query.end - query.start + 1) ? best : null;
}

/**
 * A page of source groups from a ranking. The ranking's sums are exact for every group whose facts
 * within the period are the facts within the bucket, unchanged since the build. The other groups,
 * those with a fact in the difference between period and bucket or changed since the build, are
 * few: they are summed afresh from the facts and merged in. So the page is the exact answer,
 * found by walking the ranking's index from the nearer end: forward for the first half of the
 * pages, backward for the second.
 *
 * Two statements: the first counts the changed groups, so that the second can walk the index with
 * constant limits (a limit the planner cannot see tempts it to sort the whole ranking instead).
 */
export async function rankedSourcePage(
  db: Kysely<ReadModelSchema>,
  query: PageQuery,
  scope: RankingScope,
  choice: RankingChoice,
): Promise<{ total: number; rows: SourceGroupSums[] }> {
  const offset = offsetOf(query);
  const limit = query.perPage;
  const overlap = {
    start: Math.max(query.start, choice.bucket.start),
    end: Math.min(query.end, choice.bucket.end),
  };
  const touched = [
    ...choice.differences.map((span) => sql`f.t between ${span.start} and ${span.end}`),
    sql`(f.changed_seq > ${choice.builtSeq} and f.t between ${overlap.start} and ${overlap.end})`,
  ];
  const sameGroup = (a: string, b: string) =>
    sql`${sql.ref(`${a}.domain`)} = ${sql.ref(`${b}.domain`)} and ${sql.ref(`${a}.source_ip`)} = ${sql.ref(`${b}.source_ip`)}
      and ${sql.ref(`${a}.organization`)} = ${sql.ref(`${b}.organization`)}`;
  const inPeriod = sql`f.t between ${query.start} and ${query.end}${scope === "unaligned" ? sql` and not f.dmarc_pass` : sql``}`;
  const changedGroups = sql`changed_groups as materialized (
    select distinct f.domain, f.source_ip, f.organization from agg_source f
    where ${tenantScopedFacts(query.tenantId, scope)} and (${sql.join(touched, sql` or `)})
  )`;

  const { rows: counts } = await sql<{ in_ranking: string; in_period: string }>`
    with ${changedGroups}
    select
      (select count(*) from changed_groups k join source_ranking r
        on r.ranking_id = ${choice.rankingId} and ${sameGroup("r", "k")})::text as in_ranking,
      (select count(*) from changed_groups k
        where exists (select 1 from agg_source f where ${sameGroup("f", "k")} and ${inPeriod}))::text as in_period`.execute(
    db,
  );
  const inRanking = Number(counts[0]!.in_ranking);
  const total = choice.groupCount - inRanking + Number(counts[0]!.in_period);
  if (offset >= total) return { total, rows: [] };

  // The middle of the list costs the most either way: an offset walk of half the groups.
  const backward = offset + limit / 2 > total / 2;
  // From the bottom, positions [offset, offset + limit) from the top are [total - offset - limit, total - offset).
  const wanted = backward ? total - offset : offset + limit;
  const direction = backward ? "backward" : "forward";
  const { rows } = await sql<SourceGroupSums>`
    with ${changedGroups},
    recomputed as (
      select ${sourceFactSums} from agg_source f
      join changed_groups k on ${sameGroup("f", "k")}
      where ${inPeriod}
      group by f.domain, f.source_ip, f.organization
    ),
    walked as (
      select r.* from source_ranking r
      where r.ranking_id = ${choice.rankingId}
      order by ${sourceOrder("r", direction)}
      limit ${wanted + inRanking}
    ),
    merged as (
      select ${sumColumns("w")} from walked w
      where not exists (select 1 from changed_groups k where ${sameGroup("w", "k")})
      union all
      select ${sumColumns("c")} from recomputed c
    )
    select ${sourceSumsAsText("m")} from merged m
    order by ${sourceOrder("m", direction)}
    limit ${backward ? Math.min(limit, total - offset) : limit}
    offset ${backward ? Math.max(0, total - offset - limit) : offset}`.execute(db);
  if (backward) rows.reverse();
  return { total, rows };
}
