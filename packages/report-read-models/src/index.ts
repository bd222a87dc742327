export * from "./counters.js";
export { reportReadModelMigrations } from "./migrations/index.js";
export * from "./projections/index.js";
export type * from "./schema.js";
export { factsChangedSince, sourceFactSums, tenantScopedFacts } from "./source-facts.js";
export {
  calendarBuckets,
  daysIn,
  rollingBucket,
  rollingBuckets,
  type Span,
  secondsIn,
  symmetricDifference,
} from "./source-rankings/buckets.js";
export {
  maintainSourceRankings,
  type RankingBuilt,
  type RankingMaintenanceOptions,
  tenantDomainCount,
} from "./source-rankings/maintain-source-rankings.js";
export { type RankingScope, rankingScopes } from "./source-rankings/ranking-scope.js";
export {
  inDomains,
  type OwnedReportDomains,
  reportDomainsByTenant,
  type TenantReportDomain,
  tenantReportDomainNames,
  tenantReportDomains,
} from "./tenant-domain-filter.js";
