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
export { readTenant, type TenantState, UnknownApiKeyError, UnknownTenantError } from "./tenant-history.js";
