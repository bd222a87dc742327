import type { Projection } from "@dmarc-ledger/projection-engine";
import type { TenancySchema } from "../schema.js";
import { auditTrailProjection } from "./audit-trail.js";
import { domainClaimsProjection } from "./domain-claims.js";
import { domainsProjection } from "./domains.js";
import { senderApprovalsProjection } from "./sender-approvals.js";
import { tenantsProjection } from "./tenants.js";

export {
  auditTrailProjection,
  domainClaimsProjection,
  domainsProjection,
  senderApprovalsProjection,
  tenantsProjection,
};

/** The tenancy's projections, in the order the engine applies them. */
export const tenancyProjections: readonly Projection<TenancySchema>[] = [
  tenantsProjection,
  domainsProjection,
  domainClaimsProjection,
  auditTrailProjection,
  senderApprovalsProjection,
];
