export {
  InvalidDomainError,
  normaliseDomain,
  registrableDomain,
  sameBranch,
} from "@dmarc-ledger/domain-names";
export { allScopes, generateApiKey, hashApiKey, type IssuedKey, regionOfKey } from "./api-keys.js";
export {
  type AddDomainOutcome,
  addDomain,
  type CreatedTenant,
  claimExistingDomain,
  createTenant,
  DomainOwnedElsewhereError,
  DomainTreeTakenError,
  issueApiKey,
  removeDomain,
  revokeApiKey,
} from "./commands.js";
export { InvalidGroupError, setDomainGroup } from "./domain-group.js";
export { activeClaims, currentOwner } from "./domain-owner.js";
export { DomainNotFoundError, ownedDomain } from "./domain-ownership.js";
export { tenancyMigrations } from "./migrations/index.js";
export {
  auditTrailProjection,
  domainClaimsProjection,
  domainsProjection,
  tenancyProjections,
  tenantsProjection,
} from "./projections/index.js";
export { countTenants, findApiKey, type KeyHolder } from "./queries/api-keys.js";
export { describeDomainEvent, describeDomainEvents } from "./queries/describe-domain-event.js";
export { domainHistory, type HistoryRecord } from "./queries/domain-history.js";
export { findDomain, listUnclaimedDomains, type OwnedDomain } from "./queries/domains.js";
export { listTenantDomains, listTenants, type TenantDomain, type TenantSummary } from "./queries/tenants.js";
export type {
  ApiKeyTable,
  AuditEventTable,
  DomainClaimTable,
  DomainTable,
  SenderApprovalMemberTable,
  SenderApprovalTable,
  TenancySchema,
  TenantTable,
} from "./schema.js";
export {
  InvalidSenderApprovalError,
  normaliseRange,
  type ServiceMembersReader,
  setSenderApproval,
} from "./sender-approval.js";
export { readTenant, type TenantState, UnknownApiKeyError, UnknownTenantError } from "./tenant-history.js";
