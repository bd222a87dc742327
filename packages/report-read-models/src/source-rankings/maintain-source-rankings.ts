import type { AnySchema } from "@dmarc-ledger/db";
import { type Kysely, sql } from "kysely";
import { lastSourceChangeNumber } from "../projections/source-change-counter.js";
import type { ReportAndTenancySchema } from "../schema.js";
import { type OwnedReportDomains, reportDomainsByTenant } from "../tenant-domain-filter.js";
import { underUpkeepLock } from "../upkeep-lock.js";
import { calendarBuckets, daysIn, rollingBucket, rollingDays, type Span, sameSpan } from "./buckets.js";
import {
  buildRanking,
  dropRanking,
  limitStatements,
  type RankingBuilt,
  type RankingTarget,
} from "./build-ranking.js";
import { catchUpRanking, type RankingState } from "./catch-up-ranking.js";
import { type RankingScope, rankingScopes } from "./ranking-scope.js";

export interface RankingMaintenanceOptions {
  /** A bucket with fewer facts than this is answered by grouping them: it needs no ranking. */
  minFacts?: number;
  /** Unix seconds; the rolling buckets (the last 30 and 365 days) end before its day. Default now. */
  now?: number;
  /** Only these tenants (all by default; then the round's changes are not marked as looked at). */
  tenantIds?: readonly string[];
  /** Each of the upkeep's statements may take this long (0: no limit). Default 5 minutes. */
  statementTimeoutMs?: number;
}

const defaults = { minFacts: 20_000, statementTimeoutMs: 300_000 };
/** One upkeep at a time across processes (two projectors may run): pg_try_advisory_lock's key. */
export const upkeepLock = sql`1380011595, 0`;
const DAY = 86_400;

/**
 * Keeps every tenant's by-source rankings (calendar months and years, the last 30 and 365 days)
 * current, at the cost of what changed since the last round, not of the tenant's history:
 * - the facts added since (agg_source is written once per batch, numbered) are read once, with the
 *   days and report domains they fall on;
 * - a ranking they reach, whose tenant gained or lost report domains, or that rolls on to a new
 *   day, is caught up (catch-up-ranking.ts): only those facts, the days that enter or leave, and
 *   the gained or lost domains' facts are read;
 * - a ranking nothing reached is marked current without reading a fact;
 * - a bucket without a ranking that the changes reached, or a rolling one that had to go, is
 *   built when it holds at least `minFacts` facts (counted per domain and day, agg_source_count).
 * Answers are exact without this (the queries correct for what was added since a ranking's
 * build); upkeep keeps them fast. Run by the projector process every minute or so.
 */
export async function maintainSourceRankings(
  db: Kysely<AnySchema>,
  options: RankingMaintenanceOptions = {},
): Promise<RankingBuilt[]> {
  return underUpkeepLock(db, upkeepLock, (connection: Kysely<ReportAndTenancySchema>) =>
    maintainAll(connection, options),
  );
}

/** A report domain's day with facts added since the last round; `unaligned` when one of them did not pass DMARC. */
interface ChangedDay {
  domain: string;
  t: number;
  unaligned: boolean;
}

/** The facts added since the last round (by domain and day), and the number they go up to. */
async function changesSinceLastRound(
  db: Kysely<ReportAndTenancySchema>,
  statementTimeoutMs: number,
): Promise<{ seq: string; changes: ChangedDay[] }> {
  return db
    .transaction()
    .setIsolationLevel("repeatable read")
    .execute(async (trx) => {
      await limitStatements(trx, statementTimeoutMs);
      const seq = await lastSourceChangeNumber(trx);
      const { rows: checked } = await sql<{ seq: string }>`select coalesce(
          (select checked_seq from source_ranking_upkeep), 0)::text as seq`.execute(trx);
      const { rows } = await sql<{ domain: string; t: string; unaligned: boolean }>`
        select f.domain, f.t::text as t, bool_or(not f.dmarc_pass) as unaligned from agg_source f
        where f.changed_seq > ${checked[0]!.seq}::bigint and f.changed_seq <= ${seq}::bigint
        group by f.domain, f.t`.execute(trx);
      return {
        seq,
        changes: rows.map((row) => ({ domain: row.domain, t: Number(row.t), unaligned: row.unaligned })),
      };
    });
}

const stateOf = (row: {
  ranking_id: string | number;
  tenant_id: string;
  scope: string;
  kind: string;
  bucket_start: string | number;
  bucket_end: string | number;
  anchor_start: string | number;
  anchor_end: string | number;
  report_domains: string[];
  built_seq: string | number;
  domain_count: number;
}): RankingState => ({
  rankingId: String(row.ranking_id),
  tenantId: row.tenant_id,
  scope: row.scope as RankingScope,
  kind: row.kind as RankingState["kind"],
  bucket: { start: Number(row.bucket_start), end: Number(row.bucket_end) },
  anchor: { start: Number(row.anchor_start), end: Number(row.anchor_end) },
  reportDomains: row.report_domains,
  builtSeq: String(row.built_seq),
  domainCount: row.domain_count,
});

async function maintainAll(
  db: Kysely<ReportAndTenancySchema>,
  options: RankingMaintenanceOptions,
): Promise<RankingBuilt[]> {
  const minFacts = options.minFacts ?? defaults.minFacts;
  const timeoutMs = options.statementTimeoutMs ?? defaults.statementTimeoutMs;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const { seq, changes } = await changesSinceLastRound(db, timeoutMs);
  const owners = await reportDomainsByTenant(db);
  const builds = (await db.selectFrom("source_ranking_build").selectAll().execute()).map(stateOf);
  const tenants = options.tenantIds ?? [...new Set([...owners.keys(), ...builds.map((b) => b.tenantId)])];
  const done: RankingBuilt[] = [];
  const current: string[] = [];
  for (const tenantId of tenants) {
    const tenant = owners.get(tenantId) ?? { reportDomains: [], ownedDomains: 0 };
    const names = new Set(tenant.reportDomains.map((d) => d.domain));
    const touched = changes.filter((change) => names.has(change.domain));
    const tenantBuilds = builds.filter((build) => build.tenantId === tenantId);
    if (touched.length === 0 && tenantBuilds.length === 0) continue;
    const outcome = await maintainTenant(db, {
      tenantId,
      tenant,
      touched,
      builds: tenantBuilds,
      now,
      minFacts,
      timeoutMs,
    });
    done.push(...outcome.done);
    current.push(...outcome.current);
  }
  // Nothing added since reached these: they are current as of this round's number.
  if (current.length > 0)
    await sql`update source_ranking_build set built_seq = greatest(built_seq, ${seq}::bigint)
      where ranking_id = any(${current}::bigint[])`.execute(db);
  if (!options.tenantIds)
    await sql`insert into source_ranking_upkeep (single, checked_seq) values (true, ${seq}::bigint)
      on conflict (single) do update set checked_seq = excluded.checked_seq`.execute(db);
  // Fresh statistics, so that the planner knows a ranking's size before autovacuum gets to it.
  if (done.some((ranking) => ranking.outcome === "built"))
    await sql`analyze source_ranking, source_ranking_build`.execute(db);
  return done;
}

async function maintainTenant(
  db: Kysely<ReportAndTenancySchema>,
  context: {
    tenantId: string;
    tenant: OwnedReportDomains;
    touched: ChangedDay[];
    builds: RankingState[];
    now: number;
    minFacts: number;
    timeoutMs: number;
  },
): Promise<{ done: RankingBuilt[]; current: string[] }> {
  const { tenantId, tenant, touched, now, timeoutMs } = context;
  const done: RankingBuilt[] = [];
  const current: string[] = [];
  const reportDomains = tenant.reportDomains.map((d) => d.domain).sort();
  const domainsKey = reportDomains.join(",");
  const domainCount = tenant.ownedDomains;

  for (const scope of rankingScopes) {
    const reached = (span: Span) =>
      touched.some((day) => day.t >= span.start && day.t <= span.end && (scope === "all" || day.unaligned));
    const kept: RankingState[] = [];
    let droppedRolling = false;
    for (const build of context.builds.filter((b) => b.scope === scope)) {
      const target = build.kind === "calendar" ? build.bucket : rollingBucket(now, daysIn(build.bucket));
      // A rolling ranking whose days have all gone (the upkeep stopped for a while), or that would
      // move back: built again rather than moved.
      if (
        build.kind === "rolling" &&
        (target.start < build.bucket.start || target.start - build.bucket.start >= daysIn(build.bucket) * DAY)
      ) {
        await dropRanking(db, build.rankingId);
        droppedRolling = true;
        continue;
      }
      kept.push(build);
      const stale =
        !sameSpan(target, build.bucket) ||
        build.reportDomains.join(",") !== domainsKey ||
        build.domainCount !== domainCount ||
        reached(build.bucket) ||
        reached(target);
      if (!stale) {
        current.push(build.rankingId);
        continue;
      }
      const caughtUp = await db
        .transaction()
        .setIsolationLevel("repeatable read")
        .execute((trx) => catchUpRanking(trx, build, target, timeoutMs));
      if (caughtUp) done.push(caughtUp);
    }

    // Buckets without a ranking that may now deserve one: those the changes reached, and the
    // rolling ones (which also come back when one had to go).
    const candidates: RankingTarget[] = [];
    const has = (kind: RankingTarget["kind"], span: Span) =>
      kept.some(
        (b) =>
          b.kind === kind &&
          (kind === "rolling" ? daysIn(b.bucket) === daysIn(span) : sameSpan(b.bucket, span)),
      );
    for (const days of rollingDays) {
      const bucket = rollingBucket(now, days);
      if (!has("rolling", bucket) && (droppedRolling || reached(bucket)))
        candidates.push({ tenantId, scope, kind: "rolling", bucket });
    }
    const calendar = new Map<string, Span>();
    for (const day of touched)
      for (const bucket of calendarBuckets({ start: day.t, end: day.t }))
        calendar.set(`${bucket.start}:${bucket.end}`, bucket);
    for (const bucket of calendar.values()) {
      if (!has("calendar", bucket) && reached(bucket))
        candidates.push({ tenantId, scope, kind: "calendar", bucket });
    }
    for (const candidate of candidates) {
      if ((await factsUpTo(db, reportDomains, candidate, context.minFacts)) >= context.minFacts)
        done.push(await buildRanking(db, candidate, timeoutMs));
    }
  }
  return { done, current };
}

/** The tenant's facts in the target's bucket and scope, counted up to `limit` (agg_source_count). */
async function factsUpTo(
  db: Kysely<ReportAndTenancySchema>,
  reportDomains: readonly string[],
  target: RankingTarget,
  limit: number,
): Promise<number> {
  if (reportDomains.length === 0) return 0;
  const column = target.scope === "unaligned" ? sql`c.unaligned_facts` : sql`c.facts`;
  const { rows } = await sql<{ n: string }>`select coalesce(sum(n), 0)::text as n from (
      select ${column} as n from agg_source_count c
      where c.domain = any(${reportDomains}::text[]) and c.t between ${target.bucket.start} and ${target.bucket.end}
        and ${column} > 0
      limit ${limit}) counted`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

export type { RankingBuilt } from "./build-ranking.js";
export { tenantDomainCount } from "./build-ranking.js";
