export { InvalidDomainError, normaliseDomain, registrableDomain, sameBranch } from "./domain-name.js";
export { hostNameOf, MAX_HOST_NAME_LENGTH } from "./host-name.js";
