export { allScopes, generateApiKey, hashApiKey, type IssuedKey, regionOfKey } from "./api-keys.js";
export {
  type AddDomainOutcome,
  addDomain,
  type CreatedTenant,
  createTenant,
  DomainOwnedElsewhereError,
  DomainTreeTakenError,
  issueApiKey,
  revokeApiKey,
  UnknownTenantError,
} from "./commands.js";
export { InvalidGroupError, setDomainGroup } from "./domain-group.js";
export { InvalidDomainError, normaliseDomain, registrableDomain, sameBranch } from "./domain-name.js";
export { DomainNotFoundError, ownedDomain } from "./domain-ownership.js";
