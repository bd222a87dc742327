import type { AnySchema } from "@dmarc-ledger/db";
import { type Kysely, sql } from "kysely";
import type { ReportAndTenancySchema } from "../schema.js";
import { type Span, sameSpan } from "../source-rankings/buckets.js";
import { underUpkeepLock } from "../upkeep-lock.js";
import { buildSenderRanking, dropSenderRanking, type SenderRankingBuilt } from "./build-sender-ranking.js";
import { catchUpSenderRanking } from "./catch-up-sender-ranking.js";
import { pruneSenderFactDeltas } from "./fact-deltas.js";
import { ownedReportDomains } from "./owned-report-domains.js";
import { senderRankingBuilds, senderRankingStaleness } from "./sender-ranking-state.js";

export interface SenderRankingMaintenanceOptions {
  /**
   * A bucket with fewer facts than this (as agg_sender_change counts them) is answered by
   * grouping them, fast enough: it gets no ranking. Default 20,000, as for the source rankings.
   */
  minFacts?: number;
  /** Unix seconds: the rolling buckets end on its day (and on the tenant's newest day). Default now. */
  now?: number;
  /** Only these tenants (all by default). */
  tenantIds?: readonly string[];
  /** Each of the upkeep's statements may take this long (0: no limit). Default 5 minutes. */
  statementTimeoutMs?: number;
  /**
   * A ranking that must be built again (the tenant's domains changed, or the names were
   * replayed) and was built less than this long ago is left as it is (the queries group
   * meanwhile): a rebuild costs a grouping of its bucket (about 10 s for a year at 1,000,000
   * rows, 100 to 190 s at 10,000,000). Rankings stale by new facts, an expiry or renamed
   * addresses are caught up every round instead (catchUpSenderRanking), at the cost of the
   * changes. Default 15 minutes.
   */
  minRebuildAgeMs?: number;
}

const DAY = 86_400;
/** One sender upkeep at a time across processes: pg_try_advisory_lock's key (the source rankings' is 0). */
const upkeepLock = sql`1380011595, 1`;
/** The rolling buckets: the dashboard's periods. */
export const senderRollingDays = [7, 30, 90, 365] as const;

const utcSeconds = (year: number, month: number) => Date.UTC(year, month, 1) / 1000;

/**
 * The buckets a tenant's sender rankings are kept for, around a day: the last 7, 30, 90 and 365
 * whole UTC days up to and including it, its calendar month and the one before, and its
 * calendar year. They are kept around today (what the dashboard asks: "the last 30 days" up to
 * now holds the facts of those whole days, reports beginning at midnight) and around the
 * tenant's newest day with facts (reports stopped, or data imported from the past).
 */
export function senderBuckets(day: number): { kind: "calendar" | "rolling"; bucket: Span }[] {
  const end = (day + 1) * DAY - 1;
  const date = new Date(day * DAY * 1000);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  return [
    ...senderRollingDays.map((days) => ({
      kind: "rolling" as const,
      bucket: { start: (day - days + 1) * DAY, end },
    })),
    { kind: "calendar", bucket: { start: utcSeconds(year, month), end: utcSeconds(year, month + 1) - 1 } },
    { kind: "calendar", bucket: { start: utcSeconds(year, month - 1), end: utcSeconds(year, month) - 1 } },
    { kind: "calendar", bucket: { start: utcSeconds(year, 0), end: utcSeconds(year + 1, 0) - 1 } },
  ];
}

/** What a round did to one ranking. */
export interface SenderRankingChange extends Partial<SenderRankingBuilt> {
  tenantId: string;
  bucket: Span;
  /** "caught up": the changes since its build written into it (catchUpSenderRanking). */
  outcome: "built" | "rebuilt" | "caught up" | "dropped";
  /** Why a ranking was built again or caught up. */
  reason?: "domains" | "facts" | "names";
}

/**
 * Keeps every tenant's sender rankings current: builds the missing ones of its standard buckets
 * (senderBuckets) that hold enough facts, catches up those that went stale by facts of their
 * days or renamed addresses (catchUpSenderRanking), builds again those whose tenant's domains
 * changed or whose names were replayed (senderRankingStaleness), and drops those whose bucket
 * is no longer standard. Until then, the queries add to a stale ranking what changed since its
 * build (later facts, an expiry, renamed addresses: up to their patch limit) and group the
 * facts past that limit or when the domains changed: exact either way, slower than a current
 * ranking. Run by the projector beside the source rankings' upkeep.
 */
export async function maintainSenderRankings(
  db: Kysely<AnySchema>,
  options: SenderRankingMaintenanceOptions = {},
): Promise<SenderRankingChange[]> {
  return underUpkeepLock(db, upkeepLock, (connection: Kysely<ReportAndTenancySchema>) =>
    maintainAll(connection, options),
  );
}

async function maintainAll(
  db: Kysely<ReportAndTenancySchema>,
  options: SenderRankingMaintenanceOptions,
): Promise<SenderRankingChange[]> {
  const minFacts = options.minFacts ?? 20_000;
  const timeout = options.statementTimeoutMs ?? 300_000;
  const today = Math.floor((options.now ?? Date.now() / 1000) / DAY);
  const tenants =
    options.tenantIds ??
    [
      ...new Set([
        ...(await db.selectFrom("domain").select("tenant_id").distinct().execute()).map((r) => r.tenant_id),
        ...(await db.selectFrom("sender_ranking_build").select("tenant_id").distinct().execute()).map(
          (r) => r.tenant_id,
        ),
      ]),
    ].sort();
  const changes: SenderRankingChange[] = [];
  for (const tenantId of tenants) {
    const domains = await ownedReportDomains(db, tenantId);
    const names = domains.map((d) => d.domain);
    const { rows: newest } = await sql<{ day: number | null }>`select max(day) as day from agg_sender_change
      where domain = any(${names}::text[])`.execute(db);
    const days = [today, ...(newest[0]?.day != null ? [Number(newest[0].day)] : [])];
    const wanted: { kind: "calendar" | "rolling"; bucket: Span }[] = [];
    for (const day of days)
      for (const target of senderBuckets(day))
        if (!wanted.some((w) => sameSpan(w.bucket, target.bucket))) wanted.push(target);
    const builds = await senderRankingBuilds(db, tenantId);
    for (const build of builds) {
      if (wanted.some((w) => sameSpan(w.bucket, build.bucket))) continue;
      await dropSenderRanking(db, build.buildId);
      changes.push({ tenantId, bucket: build.bucket, outcome: "dropped" });
    }
    for (const target of wanted) {
      const build = builds.find((b) => sameSpan(b.bucket, target.bucket));
      if (build) {
        const reason = await senderRankingStaleness(db, build, domains);
        if (reason === null) continue;
        if (reason !== "domains") {
          const caught = await catchUpSenderRanking(db, build, timeout);
          if (caught) {
            changes.push({ ...caught, outcome: "caught up", reason });
            continue;
          }
        }
        if (Date.now() - build.builtAt < (options.minRebuildAgeMs ?? 15 * 60_000)) continue;
        const built = await buildSenderRanking(db, { tenantId, ...target }, timeout);
        changes.push({ ...built, outcome: "rebuilt", reason });
        continue;
      }
      const { rows: counted } = await sql<{
        n: string;
      }>`select coalesce(sum(facts), 0)::text as n from agg_sender_change
        where domain = any(${names}::text[])
          and day between ${Math.floor(target.bucket.start / DAY)} and ${Math.floor(target.bucket.end / DAY)}`.execute(
        db,
      );
      if (Number(counted[0]?.n ?? 0) < Math.max(1, minFacts)) continue;
      const built = await buildSenderRanking(db, { tenantId, ...target }, timeout);
      changes.push({ ...built, outcome: "built" });
    }
  }
  // What every ranking has counted is needed no more (builds happen here, one at a time).
  await pruneSenderFactDeltas(db);
  return changes;
}
