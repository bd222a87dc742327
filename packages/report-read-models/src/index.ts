export * from "./counters.js";
export { reportReadModelMigrations } from "./migrations/index.js";
export * from "./projections/index.js";
export type * from "./schema.js";
export {
  buildSenderRanking,
  type SenderRankingBuilt,
  type SenderRankingTarget,
  senderRankingSums,
  senderRankingTotalsOf,
  senderSumsOf,
} from "./sender-rankings/build-sender-ranking.js";
export {
  catchUpSenderRanking,
  type SenderRankingCaughtUp,
} from "./sender-rankings/catch-up-sender-ranking.js";
export {
  recordSenderFactChanges,
  type SenderChangeMarks,
  senderChangeMarks,
} from "./sender-rankings/change-numbers.js";
export { changedSenderAddresses, type SenderRankingMarks } from "./sender-rankings/changed-addresses.js";
export { asAnnouncedSenderBuild } from "./sender-rankings/delta-coverage.js";
export { pruneSenderFactDeltas } from "./sender-rankings/fact-deltas.js";
export {
  maintainSenderRankings,
  type SenderRankingChange,
  type SenderRankingMaintenanceOptions,
  senderBuckets,
  senderRollingDays,
} from "./sender-rankings/maintain-sender-rankings.js";
export {
  type OwnedReportDomain,
  ownedDomainsTable,
  ownedReportDomains,
  ownershipKey,
} from "./sender-rankings/owned-report-domains.js";
export {
  dispositionsStoppedBy,
  type SenderKind,
  type StricterPolicy,
  senderColumns,
  senderNameColumns,
  senderOf,
} from "./sender-rankings/sender-naming.js";
export {
  type SenderRankingBuild,
  senderRankingBuilds,
  senderRankingBuildsCounting,
  senderRankingPatchable,
  senderRankingStaleness,
  senderRankingTotalsFrom,
} from "./sender-rankings/sender-ranking-state.js";
export { factsChangedSince, sourceFactSums, tenantScopedFacts } from "./source-facts.js";
export {
  type ReverseDnsHealth,
  reverseDnsHealth,
  sourceIpOutcomeCounts,
} from "./source-ip-answer-health.js";
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
  maintainTenantDayTotals,
  type TenantDayTotalsKept,
  takeDayChangeNumber,
  tenantDayRows,
} from "./tenant-day-totals.js";
export {
  inDomains,
  inListedDomains,
  type OwnedReportDomains,
  reportDomainsByTenant,
  type TenantReportDomain,
  tenantReportDomainNames,
  tenantReportDomains,
} from "./tenant-domain-filter.js";
