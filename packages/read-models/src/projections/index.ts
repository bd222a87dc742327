import { aggregateByDomainProjection } from "./aggregate-by-domain.js";
import { aggregateByOrganizationProjection } from "./aggregate-by-organization.js";
import { aggregateBySourceProjection } from "./aggregate-by-source.js";
import { auditTrailProjection } from "./audit-trail.js";
import { domainClaimsProjection } from "./domain-claims.js";
import { domainsProjection } from "./domains.js";
import { forensicReportsProjection } from "./forensic-reports.js";
import type { Projection } from "./projection.js";
import { reportDomainsProjection } from "./report-domains.js";
import { safeSpfStateProjection } from "./safe-spf-state.js";
import { sourceIpNamesProjection } from "./source-ip-names.js";
import { tenantsProjection } from "./tenants.js";

export { dkimDomainOf, spfDomainOf } from "./aggregate-by-source.js";
export { cutHeaders, maxHeaderCharacters } from "./forensic-reports.js";
export { type Projection, projectionOfPackage } from "./projection.js";
export { sourceDomainOf } from "./source-ip-names.js";
export {
  aggregateByDomainProjection,
  aggregateByOrganizationProjection,
  aggregateBySourceProjection,
  auditTrailProjection,
  domainClaimsProjection,
  domainsProjection,
  forensicReportsProjection,
  reportDomainsProjection,
  safeSpfStateProjection,
  sourceIpNamesProjection,
  tenantsProjection,
};

export const allProjections: readonly Projection[] = [
  tenantsProjection,
  domainsProjection,
  domainClaimsProjection,
  aggregateByDomainProjection,
  aggregateByOrganizationProjection,
  aggregateBySourceProjection,
  forensicReportsProjection,
  auditTrailProjection,
  safeSpfStateProjection,
  reportDomainsProjection,
  sourceIpNamesProjection,
];
