export { InvalidDomainError, normaliseDomain } from "@dmarc-ledger/domain-names";
export { allScopes, generateApiKey, hashApiKey, type IssuedKey, regionOfKey } from "./api-keys.js";
export {
  type AddDomainOutcome,
  addDomain,
  type CreatedTenant,
  createTenant,
  DomainOwnedElsewhereError,
  issueApiKey,
  revokeApiKey,
  UnknownTenantError,
} from "./commands.js";
export { InvalidGroupError, setDomainGroup } from "./domain-group.js";
export { DomainNotFoundError, ownedDomain } from "./domain-ownership.js";
