import { sql } from "kysely";
import type { Span } from "../source-rankings/buckets.js";
import type { RankingScope } from "../source-rankings/ranking-scope.js";
import { inDomains, type TenantReportDomain } from "./tenant-domain-filter.js";

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
