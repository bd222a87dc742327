export * from "./counters.js";
export { readModelMigrations } from "./migrations.js";
export {
  applyBatch,
  applyBatchWithin,
  catchUp,
  lowestCheckpoint,
  type ProjectorOptions,
  projectionsReached,
  type RunningProjector,
  resetProjections,
  startProjector,
  waitForProjections,
} from "./projection-engine.js";
export * from "./projections/index.js";
export { type AggregateByDomainRecord, aggregateByDomain } from "./queries/aggregate-by-domain.js";
export {
  type AggregateByDomainGroupRecord,
  aggregateByDomainGroup,
} from "./queries/aggregate-by-domain-group.js";
export {
  type AggregateByOrganizationRecord,
  aggregateByOrganization,
} from "./queries/aggregate-by-organization.js";
export {
  type AggregateBySourceRecord,
  aggregateBySource,
  aggregateByUnalignedSource,
  type SourcePageOptions,
} from "./queries/aggregate-by-source.js";
export { countTenants, findApiKey, type KeyHolder } from "./queries/api-keys.js";
export { describeDomainEvent, describeDomainEvents } from "./queries/describe-domain-event.js";
export {
  type DomainRecord,
  findDomain,
  listDomains,
  listUnclaimedDomains,
  type OwnedDomain,
} from "./queries/domains.js";
export { type ForensicRecord, forensicReports } from "./queries/forensic.js";
export { domainHistory, type HistoryRecord } from "./queries/history.js";
export { type ProjectionLag, projectionLags, safeSpfStatusCounts } from "./queries/operations.js";
export type { Page, PageQuery } from "./queries/page.js";
export {
  type SafeSpfFreshness,
  type SafeSpfState,
  safeSpfState,
  staleGraceMs,
} from "./queries/safe-spf-state.js";
export { chooseRanking, type RankingChoice } from "./queries/source-page-ranked.js";
export { tenantReportDomainNames } from "./queries/tenant-domain-filter.js";
export { listTenantDomains, listTenants, type TenantDomain, type TenantSummary } from "./queries/tenants.js";
export { type RebuildOptions, rebuildBeside } from "./rebuild-beside.js";
export type { ReadModelSchema } from "./schema.js";
export { calendarBuckets, type Span } from "./source-rankings/buckets.js";
export {
  maintainSourceRankings,
  type RankingBuilt,
  type RankingMaintenanceOptions,
} from "./source-rankings/maintain-source-rankings.js";
export { readWorkerCheckpoint, writeWorkerCheckpoint } from "./worker-checkpoint.js";
