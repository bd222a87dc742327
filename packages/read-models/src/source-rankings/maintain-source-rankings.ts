import { type Kysely, sql } from "kysely";
import { belongsToTenant } from "../queries/tenant-domain-filter.js";
import type { ReadModelSchema } from "../schema.js";
import { calendarBuckets, type Span } from "./buckets.js";
import { type RankingScope, rankingScopes } from "./ranking-scope.js";

export interface RankingMaintenanceOptions {
  /** A bucket with fewer facts than this is answered by grouping them: it needs no ranking. */
  minFacts?: number;
  /**
   * A ranking is rebuilt once this share of its groups (at least `minFacts`) may have changed since
   * it was built. Until then the by-source queries recompute those groups exactly.
   */
  staleShare?: number;
  /** Only these tenants (all by default). */
  tenantIds?: readonly string[];
}

export interface RankingBuilt {
  tenantId: string;
  scope: RankingScope;
  bucket: Span;
  groups: number;
  ms: number;
}

const defaults = { minFacts: 20_000, staleShare: 0.02 };

/** The tenant's facts of one scope, aliased `f`. */
const scopedFacts = (tenantId: string, scope: RankingScope) =>
  sql`${belongsToTenant(tenantId, "f.domain")}${scope === "unaligned" ? sql` and not f.dmarc_pass` : sql``}`;

/** Counts rows of `from where condition`, stopping at `limit`: enough to compare with a threshold. */
async function countUpTo(db: Kysely<ReadModelSchema>, condition: ReturnType<typeof sql>, limit: number) {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from (
    select 1 from agg_source f where ${condition} limit ${limit}) counted`.execute(db);
  return rows[0]?.n ?? 0;
}

/**
 * Keeps the source rankings of every tenant's calendar months and years current enough: builds
 * the missing ones of buckets with many facts, rebuilds those whose tenant gained a domain or
 * whose facts changed much since. A stale ranking still gives exact answers (the queries
 * recompute what changed); rebuilding only keeps them fast. Run by the projector when it is idle.
 */
export async function maintainSourceRankings(
  db: Kysely<ReadModelSchema>,
  options: RankingMaintenanceOptions = {},
): Promise<RankingBuilt[]> {
  const minFacts = options.minFacts ?? defaults.minFacts;
  const staleShare = options.staleShare ?? defaults.staleShare;
  const tenants = options.tenantIds
    ? [...options.tenantIds]
    : (await db.selectFrom("tenant").select("tenant_id").execute()).map((row) => row.tenant_id);
  const built: RankingBuilt[] = [];

  for (const tenantId of tenants) {
    const domainCount = await tenantDomainCount(db, tenantId);
    // agg_domain is small (a row per domain and day): the tenant's time extent comes from there.
    const { rows: extent } = await sql<{ first: string | null; last: string | null }>`
      select min(f.t)::text as first, max(f.t)::text as last from agg_domain f
      where ${belongsToTenant(tenantId, "f.domain")}`.execute(db);
    if (!extent[0]?.first || !extent[0].last) continue;
    const buckets = calendarBuckets({ start: Number(extent[0].first), end: Number(extent[0].last) });
    const existing = await db
      .selectFrom("source_ranking_build")
      .selectAll()
      .where("tenant_id", "=", tenantId)
      .execute();

    for (const scope of rankingScopes) {
      for (const bucket of buckets) {
        const inBucket = sql`${scopedFacts(tenantId, scope)} and f.t between ${bucket.start} and ${bucket.end}`;
        const current = existing.find(
          (build) => build.scope === scope && Number(build.bucket_start) === bucket.start,
        );
        let wanted: boolean;
        if (!current || current.domain_count !== domainCount) {
          wanted = (await countUpTo(db, inBucket, minFacts)) >= minFacts;
        } else {
          const threshold = Math.max(minFacts, Math.ceil(Number(current.group_count) * staleShare));
          const changed = sql`${inBucket} and f.changed_seq > ${current.built_seq}`;
          wanted = (await countUpTo(db, changed, threshold)) >= threshold;
        }
        if (wanted) built.push(await buildRanking(db, tenantId, scope, bucket, domainCount));
        else if (current && current.domain_count !== domainCount) await dropRanking(db, current.ranking_id);
      }
    }
  }
  // Fresh statistics, so that the planner knows a ranking's size before autovacuum gets to it.
  if (built.length > 0) await sql`analyze source_ranking, source_ranking_build`.execute(db);
  return built;
}

export async function tenantDomainCount(db: Kysely<ReadModelSchema>, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom("domain")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("tenant_id", "=", tenantId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Builds one ranking from the facts and replaces the previous one of its bucket in the same
 * transaction. Repeatable read makes the facts grouped and `built_seq` one snapshot: a batch that
 * commits meanwhile has a higher change number, so queries treat its groups as changed.
 */
async function buildRanking(
  db: Kysely<ReadModelSchema>,
  tenantId: string,
  scope: RankingScope,
  bucket: Span,
  domainCount: number,
): Promise<RankingBuilt> {
  const started = performance.now();
  const groups = await db
    .transaction()
    .setIsolationLevel("repeatable read")
    .execute(async (trx) => {
      const { rows } = await sql<{ id: string; seq: string }>`
        select nextval('source_ranking_id_seq')::text as id,
          (select coalesce(max(changed_seq), 0) from agg_source)::text as seq`.execute(trx);
      const { id, seq } = rows[0]!;
      const inserted = await sql`
        insert into source_ranking (ranking_id, domain, source_ip, organization, volume, dmarc_pass,
          unaligned_arc_pass, dkim_aligned, spf_aligned, dkim_pass, spf_pass, last_t)
        select ${id}::bigint, f.domain, f.source_ip, f.organization, sum(f.volume),
          coalesce(sum(f.volume) filter (where f.dmarc_pass), 0), sum(f.unaligned_arc_pass),
          sum(f.dkim_aligned), sum(f.spf_aligned), sum(f.dkim_pass), sum(f.spf_pass), max(f.t)
        from agg_source f
        where ${scopedFacts(tenantId, scope)} and f.t between ${bucket.start} and ${bucket.end}
        group by f.domain, f.source_ip, f.organization`.execute(trx);
      const groupCount = Number(inserted.numAffectedRows ?? 0n);
      const previous = await trx
        .selectFrom("source_ranking_build")
        .select("ranking_id")
        .where("tenant_id", "=", tenantId)
        .where("scope", "=", scope)
        .where("bucket_start", "=", bucket.start)
        .execute();
      for (const old of previous) await dropRanking(trx, old.ranking_id);
      await trx
        .insertInto("source_ranking_build")
        .values({
          ranking_id: id,
          tenant_id: tenantId,
          scope,
          bucket_start: bucket.start,
          bucket_end: bucket.end,
          built_seq: seq,
          domain_count: domainCount,
          group_count: groupCount,
        })
        .execute();
      return groupCount;
    });
  return { tenantId, scope, bucket, groups, ms: performance.now() - started };
}

async function dropRanking(db: Kysely<ReadModelSchema>, rankingId: string | number): Promise<void> {
  await db.deleteFrom("source_ranking").where("ranking_id", "=", rankingId).execute();
  await db.deleteFrom("source_ranking_build").where("ranking_id", "=", rankingId).execute();
}
