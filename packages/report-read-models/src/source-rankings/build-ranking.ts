import type { AnySchema } from "@dmarc-ledger/db";
import { type Kysely, sql, type Transaction } from "kysely";
import { lastSourceChangeNumber } from "../projections/source-change-counter.js";
import type { ReportAndTenancySchema } from "../schema.js";
import { sourceFactSums, tenantScopedFacts } from "../source-facts.js";
import { type TenantReportDomain, tenantReportDomains } from "../tenant-domain-filter.js";
import type { Span } from "./buckets.js";
import type { RankingScope } from "./ranking-scope.js";

/** What a ranking ranks: a tenant's groups in a scope over a bucket of one kind. */
export interface RankingTarget {
  tenantId: string;
  scope: RankingScope;
  kind: "calendar" | "rolling";
  bucket: Span;
}

export interface RankingBuilt extends RankingTarget {
  /**
   * Built from all its facts; caught up: what was added since its build added, the days it left
   * taken out, the days it came to added, the report domains the tenant gained or lost added or
   * taken out.
   */
  outcome: "built" | "caught_up";
  /** Groups in the ranking (built), or groups whose sums changed (caught up). */
  groups: number;
  ms: number;
}

/** The condition on agg_source rows aliased `f` that a ranking of `bucket` sums. */
export const factsInBucket = (domains: readonly TenantReportDomain[], scope: RankingScope, bucket: Span) =>
  sql`${tenantScopedFacts(domains, scope)} and f.t between ${bucket.start} and ${bucket.end}`;

export async function tenantDomainCount(db: Kysely<AnySchema>, tenantId: string): Promise<number> {
  const row = await (db as Kysely<ReportAndTenancySchema>)
    .selectFrom("domain")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("tenant_id", "=", tenantId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The upkeep's statements run under a timeout of their own, whatever the pool's (0: none). */
export async function limitStatements(
  trx: Transaction<ReportAndTenancySchema>,
  timeoutMs: number,
): Promise<void> {
  await sql`select set_config('statement_timeout', ${String(timeoutMs)}, true)`.execute(trx);
}

/**
 * Builds one ranking from every fact in its bucket, replacing any of the same target, in one
 * repeatable-read snapshot: a batch that commits meanwhile has a higher change number than
 * `built_seq`, so queries and the next catch-up treat its facts as added after the build. Its
 * offsets are measured from the bucket, its anchor for as long as it lives.
 */
export async function buildRanking(
  db: Kysely<ReportAndTenancySchema>,
  target: RankingTarget,
  statementTimeoutMs: number,
): Promise<RankingBuilt> {
  const started = performance.now();
  const { bucket } = target;
  const groups = await db
    .transaction()
    .setIsolationLevel("repeatable read")
    .execute(async (trx) => {
      await limitStatements(trx, statementTimeoutMs);
      const { rows } = await sql<{ id: string }>`select nextval('source_ranking_id_seq')::text as id`.execute(
        trx,
      );
      const { id } = rows[0]!;
      const seq = await lastSourceChangeNumber(trx);
      // In the build's snapshot: a report domain new since would otherwise be neither ranked nor
      // seen as added.
      const domains = await tenantReportDomains(trx, target.tenantId);
      const domainCount = await tenantDomainCount(trx, target.tenantId);
      const inserted = await sql`
        insert into source_ranking (ranking_id, domain, source_ip, organization, volume, dmarc_pass,
          unaligned_arc_pass, dkim_aligned, spf_aligned, dkim_pass, spf_pass, facts, start_offset, end_offset)
        select ${id}::bigint, ${sourceFactSums},
          min(f.t) - ${bucket.start} as start_offset, ${bucket.end} - max(f.t) as end_offset
        from agg_source f
        where ${factsInBucket(domains, target.scope, bucket)}
        group by f.domain, f.source_ip, f.organization
        -- Stored by start_offset: the groups a period leaves out at the bucket's start (the last
        -- 30 days to the second leave out part of the first day) then lie together in the table.
        order by start_offset`.execute(trx);
      const groupCount = Number(inserted.numAffectedRows ?? 0n);
      const previous = await trx
        .selectFrom("source_ranking_build")
        .select("ranking_id")
        .where("tenant_id", "=", target.tenantId)
        .where("scope", "=", target.scope)
        .where("kind", "=", target.kind)
        .where("bucket_start", "=", bucket.start)
        .where("bucket_end", "=", bucket.end)
        .execute();
      for (const old of previous) await dropRanking(trx, old.ranking_id);
      await trx
        .insertInto("source_ranking_build")
        .values({
          ranking_id: id,
          tenant_id: target.tenantId,
          scope: target.scope,
          kind: target.kind,
          bucket_start: bucket.start,
          bucket_end: bucket.end,
          anchor_start: bucket.start,
          anchor_end: bucket.end,
          report_domains: domains.map((d) => d.domain).sort(),
          built_seq: seq,
          domain_count: domainCount,
          group_count: groupCount,
        })
        .execute();
      return groupCount;
    });
  return { ...target, outcome: "built", groups, ms: performance.now() - started };
}

export async function dropRanking(
  db: Kysely<ReportAndTenancySchema>,
  rankingId: string | number,
): Promise<void> {
  await db.deleteFrom("source_ranking").where("ranking_id", "=", rankingId).execute();
  await db.deleteFrom("source_ranking_build").where("ranking_id", "=", rankingId).execute();
}
