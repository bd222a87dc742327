import type { AnySchema } from "@dmarc-ledger/db";
import { type Kysely, sql } from "kysely";
import { lastSourceChangeNumber } from "../projections/source-change-counter.js";
import type { ReportAndTenancySchema } from "../schema.js";
import { factsChangedSince, sourceFactSums, tenantScopedFacts } from "../source-facts.js";
import { inDomains, type TenantReportDomain, tenantReportDomains } from "../tenant-domain-filter.js";
import { calendarBuckets, rollingBuckets, type Span } from "./buckets.js";
import { type RankingScope, rankingScopes } from "./ranking-scope.js";

export interface RankingMaintenanceOptions {
  /** A bucket with fewer facts than this is answered by grouping them: it needs no ranking. */
  minFacts?: number;
  /** Unix seconds; the rolling buckets (the last 30 and 365 days) end before its day. Default now. */
  now?: number;
  /** Only these tenants (all by default). */
  tenantIds?: readonly string[];
}

export interface RankingBuilt {
  tenantId: string;
  scope: RankingScope;
  bucket: Span;
  /** Built from all its facts, or refreshed: only the groups whose facts changed summed again. */
  kind: "built" | "refreshed";
  /** Groups in the ranking (built) or summed again (refreshed). */
  groups: number;
  ms: number;
}

const defaults = { minFacts: 20_000 };
/** One upkeep at a time across processes (two projectors may run): pg_try_advisory_lock's key. */
const upkeepLock = sql`1380011595, 0`;

/** The condition on agg_source rows aliased `f` that a ranking of `bucket` sums. */
const factsInBucket = (domains: readonly TenantReportDomain[], scope: RankingScope, bucket: Span) =>
  sql`${tenantScopedFacts(domains, scope)} and f.t between ${bucket.start} and ${bucket.end}`;

/**
 * How far a group's first and last facts lie from the bucket's edges (source_ranking's
 * start_offset and end_offset).
 */
const factExtent = (bucket: Span) =>
  sql`min(f.t) - ${bucket.start} as start_offset, ${bucket.end} - max(f.t) as end_offset`;

/** Counts rows of `from where condition`, stopping at `limit`: enough to compare with a threshold. */
async function countUpTo(
  db: Kysely<ReportAndTenancySchema>,
  condition: ReturnType<typeof sql>,
  limit: number,
) {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from (
    select 1 from agg_source f where ${condition} limit ${limit}) counted`.execute(db);
  return rows[0]?.n ?? 0;
}

/**
 * Keeps the source rankings of every tenant's calendar months and years, and of its last 30 and
 * 365 days, current: builds the missing ones of buckets with at least `minFacts` facts, builds
 * again those whose tenant's domains changed, refreshes the others where facts changed since
 * (summing only the changed groups again), and drops those of buckets that are gone (yesterday's
 * rolling ones). Answers are exact without this (the queries correct for what changed since a
 * ranking's build); upkeep keeps them fast. Run by the projector process every minute or so.
 */
export async function maintainSourceRankings(
  db: Kysely<ReportAndTenancySchema>,
  options: RankingMaintenanceOptions = {},
): Promise<RankingBuilt[]> {
  return db.connection().execute(async (connection) => {
    const { rows } = await sql<{
      locked: boolean;
    }>`select pg_try_advisory_lock(${upkeepLock}) as locked`.execute(connection);
    if (!rows[0]?.locked) return [];
    try {
      return await maintainAll(connection, options);
    } finally {
      await sql`select pg_advisory_unlock(${upkeepLock})`.execute(connection);
    }
  });
}

async function maintainAll(
  db: Kysely<ReportAndTenancySchema>,
  options: RankingMaintenanceOptions,
): Promise<RankingBuilt[]> {
  const minFacts = options.minFacts ?? defaults.minFacts;
  const tenants = options.tenantIds
    ? [...options.tenantIds]
    : (await db.selectFrom("tenant").select("tenant_id").execute()).map((row) => row.tenant_id);
  const done: RankingBuilt[] = [];

  for (const tenantId of tenants) {
    const domainCount = await tenantDomainCount(db, tenantId);
    const domains = await tenantReportDomains(db, tenantId);
    // agg_domain is small (a row per domain and day): the tenant's time extent comes from there.
    const { rows: extent } = await sql<{ first: string | null; last: string | null }>`
      select min(f.t)::text as first, max(f.t)::text as last from agg_domain f
      where ${inDomains(domains, "f.domain")}`.execute(db);
    if (!extent[0]?.first || !extent[0].last) continue;
    const buckets = distinct([
      ...calendarBuckets({ start: Number(extent[0].first), end: Number(extent[0].last) }),
      ...rollingBuckets(options.now ?? Math.floor(Date.now() / 1000)),
    ]);
    const existing = await db
      .selectFrom("source_ranking_build")
      .selectAll()
      .where("tenant_id", "=", tenantId)
      .execute();

    for (const scope of rankingScopes) {
      for (const bucket of buckets) {
        const inBucket = factsInBucket(domains, scope, bucket);
        const current = existing.find(
          // A year and its January start together: a bucket is its start and its end.
          (build) =>
            build.scope === scope &&
            Number(build.bucket_start) === bucket.start &&
            Number(build.bucket_end) === bucket.end,
        );
        if (current && current.domain_count === domainCount) {
          const changed = factsChangedSince(domains, scope, bucket, current.built_seq);
          if ((await countUpTo(db, changed, 1)) > 0)
            done.push(await refreshRanking(db, tenantId, scope, bucket, current.ranking_id));
        } else if ((await countUpTo(db, inBucket, minFacts)) >= minFacts) {
          done.push(await buildRanking(db, tenantId, scope, bucket, domainCount));
        } else if (current) {
          await dropRanking(db, current.ranking_id);
        }
      }
    }
    // Yesterday's rolling buckets.
    for (const build of existing) {
      const kept = buckets.some(
        (bucket) => Number(build.bucket_start) === bucket.start && Number(build.bucket_end) === bucket.end,
      );
      if (!kept) await dropRanking(db, build.ranking_id);
    }
  }
  // Fresh statistics, so that the planner knows a ranking's size before autovacuum gets to it.
  if (done.some((ranking) => ranking.kind === "built"))
    await sql`analyze source_ranking, source_ranking_build`.execute(db);
  return done;
}

/** A rolling bucket can be a calendar one too (the last 365 days, on the 1st of January). */
const distinct = (buckets: Span[]) =>
  buckets.filter(
    (bucket, index) => buckets.findIndex((b) => b.start === bucket.start && b.end === bucket.end) === index,
  );

/** The tenant's number of domains: a ranking built with another number is void. Takes any handle. */
export async function tenantDomainCount(handle: Kysely<AnySchema>, tenantId: string): Promise<number> {
  const db: Kysely<ReportAndTenancySchema> = handle;
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
  db: Kysely<ReportAndTenancySchema>,
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
      const { rows } = await sql<{ id: string }>`select nextval('source_ranking_id_seq')::text as id`.execute(
        trx,
      );
      const { id } = rows[0]!;
      const seq = await lastSourceChangeNumber(trx);
      // In the build's snapshot: a report domain new since would otherwise be neither ranked nor
      // seen as changed.
      const domains = await tenantReportDomains(trx, tenantId);
      const inserted = await sql`
        insert into source_ranking (ranking_id, domain, source_ip, organization, volume, dmarc_pass,
          unaligned_arc_pass, dkim_aligned, spf_aligned, dkim_pass, spf_pass, facts, start_offset, end_offset)
        select ${id}::bigint, ${sourceFactSums}, ${factExtent(bucket)}
        from agg_source f
        where ${factsInBucket(domains, scope, bucket)}
        group by f.domain, f.source_ip, f.organization
        -- Stored by start_offset: the groups a period leaves out at the bucket's start (the last
        -- 30 days to the second leave out part of the first day) then lie together in the table.
        order by start_offset`.execute(trx);
      const groupCount = Number(inserted.numAffectedRows ?? 0n);
      const previous = await trx
        .selectFrom("source_ranking_build")
        .select("ranking_id")
        .where("tenant_id", "=", tenantId)
        .where("scope", "=", scope)
        .where("bucket_start", "=", bucket.start)
        .where("bucket_end", "=", bucket.end)
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
  return { tenantId, scope, bucket, kind: "built", groups, ms: performance.now() - started };
}

/**
 * Sums again, over the bucket, the groups with a fact changed since the ranking's build, writes
 * them into the ranking (new groups are added) and moves `built_seq` on: the same result as a
 * build, at the cost of what changed. One repeatable-read snapshot, as for a build.
 */
async function refreshRanking(
  db: Kysely<ReportAndTenancySchema>,
  tenantId: string,
  scope: RankingScope,
  bucket: Span,
  rankingId: string | number,
): Promise<RankingBuilt> {
  const started = performance.now();
  const groups = await db
    .transaction()
    .setIsolationLevel("repeatable read")
    .execute(async (trx) => {
      const { rows } = await sql<{ built_seq: string }>`
        select built_seq::text from source_ranking_build where ranking_id = ${rankingId} for update`.execute(
        trx,
      );
      const build = rows[0];
      if (!build) return 0;
      const seq = await lastSourceChangeNumber(trx);
      const domains = await tenantReportDomains(trx, tenantId);
      const inBucket = factsInBucket(domains, scope, bucket);
      const { rows: written } = await sql<{ added: number; summed: number }>`
        with changed as (
          select distinct f.domain, f.source_ip, f.organization from agg_source f
          where ${factsChangedSince(domains, scope, bucket, build.built_seq)}
        ),
        summed as (
          select ${sourceFactSums}, ${factExtent(bucket)} from agg_source f
          join changed k on k.domain = f.domain and k.source_ip = f.source_ip and k.organization = f.organization
          where ${inBucket}
          group by f.domain, f.source_ip, f.organization
        ),
        written as (
          insert into source_ranking (ranking_id, domain, source_ip, organization, volume, dmarc_pass,
            unaligned_arc_pass, dkim_aligned, spf_aligned, dkim_pass, spf_pass, facts, start_offset, end_offset)
          select ${rankingId}::bigint, s.* from summed s
          on conflict (ranking_id, domain, source_ip, organization) do update set
            volume = excluded.volume, dmarc_pass = excluded.dmarc_pass,
            unaligned_arc_pass = excluded.unaligned_arc_pass, dkim_aligned = excluded.dkim_aligned,
            spf_aligned = excluded.spf_aligned, dkim_pass = excluded.dkim_pass,
            spf_pass = excluded.spf_pass, facts = excluded.facts,
            start_offset = excluded.start_offset, end_offset = excluded.end_offset
          returning (xmax = 0) as inserted
        )
        select (count(*) filter (where inserted))::int as added, count(*)::int as summed from written`.execute(
        trx,
      );
      const added = written[0]?.added ?? 0;
      await sql`update source_ranking_build
        set built_seq = ${seq}, group_count = group_count + ${added}, built_at = now()
        where ranking_id = ${rankingId}`.execute(trx);
      return written[0]?.summed ?? 0;
    });
  return { tenantId, scope, bucket, kind: "refreshed", groups, ms: performance.now() - started };
}

async function dropRanking(db: Kysely<ReportAndTenancySchema>, rankingId: string | number): Promise<void> {
  await db.deleteFrom("source_ranking").where("ranking_id", "=", rankingId).execute();
  await db.deleteFrom("source_ranking_build").where("ranking_id", "=", rankingId).execute();
}
