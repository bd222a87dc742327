import { type RawBuilder, sql } from "kysely";
import type { Span } from "./source-rankings/buckets.js";
import type { RankingScope } from "./source-rankings/ranking-scope.js";
import { inDomains, type TenantReportDomain } from "./tenant-domain-filter.js";

/*
 * SQL over the by-source facts (agg_source rows aliased `f`), shared by the rankings' upkeep and
 * the by-source queries (packages/queries), so that both sum and scope the facts alike.
 */

/** The condition on agg_source rows aliased `f` that are the tenant's (`domains`) and in the scope. */
export const tenantScopedFacts = (domains: readonly TenantReportDomain[], scope: RankingScope) =>
  sql`${inDomains(domains, "f.domain")}${scope === "unaligned" ? sql` and not f.dmarc_pass` : sql``}`;

/**
 * The tenant's facts in `bucket` changed by a projection batch after change number `seq`: what a
 * ranking built at `seq` has not seen. `t + 0` keeps the planner on the BRIN index of changed_seq
 * (the few pages written since); the period index would match every fact of the bucket first.
 */
export const factsChangedSince = (
  domains: readonly TenantReportDomain[],
  scope: RankingScope,
  bucket: Span,
  seq: string | number | bigint,
) =>
  sql`${tenantScopedFacts(domains, scope)} and f.changed_seq > ${String(seq)}::bigint
    and f.t + 0 between ${bucket.start} and ${bucket.end}`;

/**
 * The sums of agg_source rows aliased `f`, grouped by the source group: domain, source_ip,
 * organization, volume, dmarc_pass, unaligned_arc_pass, dkim_aligned, spf_aligned, dkim_pass,
 * spf_pass and facts (how many rows were summed), in this order.
 */
export const sourceFactSums: RawBuilder<unknown> = sql`f.domain, f.source_ip, f.organization,
  sum(f.volume) as volume, coalesce(sum(f.volume) filter (where f.dmarc_pass), 0) as dmarc_pass,
  sum(f.unaligned_arc_pass) as unaligned_arc_pass, sum(f.dkim_aligned) as dkim_aligned,
  sum(f.spf_aligned) as spf_aligned, sum(f.dkim_pass) as dkim_pass, sum(f.spf_pass) as spf_pass,
  count(*) as facts`;
