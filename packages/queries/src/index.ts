export {
  type AggregateByDateRecord,
  aggregateByDate,
  type DateSeriesQuery,
  tenantHasGroup,
} from "./aggregate-by-date.js";
export { type AggregateByDomainRecord, aggregateByDomain } from "./aggregate-by-domain.js";
export { type AggregateByDomainGroupRecord, aggregateByDomainGroup } from "./aggregate-by-domain-group.js";
export { type AggregateByOrganizationRecord, aggregateByOrganization } from "./aggregate-by-organization.js";
export {
  type AggregateBySenderRecord,
  aggregateBySender,
  aggregateBySenderGrouped,
  aggregateBySenderRanked,
  type SenderKind,
  share,
} from "./aggregate-by-sender.js";
export {
  type AggregateBySourceRecord,
  aggregateBySource,
  aggregateByUnalignedSource,
  type SourcePageOptions,
} from "./aggregate-by-source.js";
export {
  type BucketRange,
  bucketRange,
  coarserBucket,
  type DateBucket,
  dateBuckets,
  dateOfDay,
  dayOfTime,
  maxBuckets,
} from "./date-buckets.js";
export { type DomainRecord, listDomains } from "./domains.js";
export {
  type ForensicDetail,
  type ForensicOptions,
  type ForensicRecord,
  forensicReport,
  forensicReports,
  shownForensicFields,
} from "./forensic.js";
export { maskAddresses, redactHeaders, removed } from "./forensic-redaction.js";
export { newestFactTime } from "./newest-fact.js";
export type { Page, PageQuery } from "./page.js";
export {
  dispositionsStoppedBy,
  type PolicyImpact,
  type PolicyImpactQuery,
  type PolicyImpactRecord,
  type PolicyImpactTotals,
  policyImpact,
  policyImpactGrouped,
  policyImpactRanked,
  type StricterPolicy,
} from "./policy-impact.js";
export type { QuerySchema } from "./schema.js";
export {
  addedListLimit,
  type SenderApprovalRecord,
  senderApprovals,
  serviceMembers,
} from "./sender-approvals.js";
export type { NamedBy } from "./sender-named-by.js";
export { chooseRanking, type RankingChoice } from "./source-page-ranked.js";
export {
  type TlsByDateRecord,
  type TlsByDomainRecord,
  type TlsFailureRecord,
  tlsByDate,
  tlsByDomain,
  tlsFailures,
} from "./tls.js";
