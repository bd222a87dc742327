import type { Projection } from "@dmarc-ledger/projection-engine";
import type { ReportSchema } from "../schema.js";
import { aggregateByDateProjection as byDate } from "./aggregate-by-date.js";
import { aggregateByDomainProjection as byDomain } from "./aggregate-by-domain.js";
import { aggregateByOrganizationProjection as byOrganization } from "./aggregate-by-organization.js";
import { aggregateBySenderProjection as bySender } from "./aggregate-by-sender.js";
import { aggregateBySourceProjection as bySource } from "./aggregate-by-source.js";
import {
  dropExpiredDays,
  dropExpiredDomainFacts,
  dropExpiredOrganizationFacts,
  dropExpiredSenderFacts,
  dropExpiredSourceFacts,
  dropExpiredTlsFacts,
  withAggregateExpiry,
} from "./aggregate-expiry.js";
import { forensicReportsProjection } from "./forensic-reports.js";
import { reportDomainsProjection } from "./report-domains.js";
import { sourceIpNamesProjection } from "./source-ip-names.js";
import { tlsFactsProjection as tlsFacts } from "./tls-facts.js";

/**
 * The aggregate projections, each also dropping its facts that retention expired
 * (AggregateFactsExpired: aggregate-expiry.ts).
 */
const aggregateByDomainProjection = withAggregateExpiry(byDomain, dropExpiredDomainFacts);
const aggregateByOrganizationProjection = withAggregateExpiry(byOrganization, dropExpiredOrganizationFacts);
const aggregateBySourceProjection = withAggregateExpiry(bySource, dropExpiredSourceFacts);
const aggregateByDateProjection = withAggregateExpiry(byDate, dropExpiredDays);
const aggregateBySenderProjection = withAggregateExpiry(bySender, dropExpiredSenderFacts);
const tlsFactsProjection = withAggregateExpiry(tlsFacts, dropExpiredTlsFacts);

export { isForwarded } from "./aggregate-by-sender.js";
export { dkimDomainOf, spfDomainOf } from "./aggregate-by-source.js";
export {
  countExpiringFacts,
  type DropExpired,
  expiryCutoff,
  withAggregateExpiry,
} from "./aggregate-expiry.js";
export {
  countPersonalRows,
  cutHeaders,
  maxHeaderCharacters,
  personalRowScopes,
} from "./forensic-reports.js";
export { type SourceNamingColumns, sourceDomainOf, sourceNamingSetBy } from "./source-ip-names.js";
export {
  aggregateByDateProjection,
  aggregateByDomainProjection,
  aggregateByOrganizationProjection,
  aggregateBySenderProjection,
  aggregateBySourceProjection,
  forensicReportsProjection,
  reportDomainsProjection,
  sourceIpNamesProjection,
  tlsFactsProjection,
};

/** The report read models' projections, in the order the engine applies them. */
export const reportProjections: readonly Projection<ReportSchema>[] = [
  aggregateByDomainProjection,
  aggregateByOrganizationProjection,
  aggregateBySourceProjection,
  forensicReportsProjection,
  reportDomainsProjection,
  sourceIpNamesProjection,
  aggregateByDateProjection,
  aggregateBySenderProjection,
  tlsFactsProjection,
];
