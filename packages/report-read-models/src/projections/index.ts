import type { Projection } from "@dmarc-ledger/projection-engine";
import type { ReportSchema } from "../schema.js";
import { aggregateByDateProjection } from "./aggregate-by-date.js";
import { aggregateByDomainProjection } from "./aggregate-by-domain.js";
import { aggregateByOrganizationProjection } from "./aggregate-by-organization.js";
import { aggregateBySenderProjection } from "./aggregate-by-sender.js";
import { aggregateBySourceProjection } from "./aggregate-by-source.js";
import { forensicReportsProjection } from "./forensic-reports.js";
import { reportDomainsProjection } from "./report-domains.js";
import { sourceIpNamesProjection } from "./source-ip-names.js";

export { isForwarded } from "./aggregate-by-sender.js";
export { dkimDomainOf, spfDomainOf } from "./aggregate-by-source.js";
export {
  countPersonalRows,
  cutHeaders,
  maxHeaderCharacters,
  personalRowScopes,
} from "./forensic-reports.js";
export { sourceDomainOf } from "./source-ip-names.js";
export {
  aggregateByDateProjection,
  aggregateByDomainProjection,
  aggregateByOrganizationProjection,
  aggregateBySenderProjection,
  aggregateBySourceProjection,
  forensicReportsProjection,
  reportDomainsProjection,
  sourceIpNamesProjection,
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
];
