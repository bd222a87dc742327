export { DataKeys, type KeysHandle, monthOf } from "./data-keys.js";
export { type MasterKeys, masterKeyFile, masterKeyId, masterKeysFrom } from "./master-keys.js";
export { personalDataMigrations } from "./migrations/index.js";
export { openDataKeys } from "./open-personal-data.js";
export { BlindIndex, isPeopleScope, peopleIndexScope, personScope } from "./people.js";
export {
  checkPolicy,
  defaultPolicy,
  InvalidPolicyError,
  type PersonalDataPolicy,
  personalDataPolicies,
  personalDataPolicy,
  personalDataPolicyProjection,
  retentionDays,
  setPersonalDataPolicy,
} from "./policy.js";
export { releaseRetentionLease, takeRetentionLease } from "./retention-lease.js";
export type { DataKeyTable, PersonalDataSchema } from "./schema.js";
export { isSecretScope, SecretBox, secretScope } from "./service-secrets.js";
export { personalDataSettings, personalDataSettingsFromEnv } from "./settings.js";
export { keyScopes, shredDataKeys, shredEpoch } from "./shred.js";
export { domainOfScope, domainScope, noTenant, tenantOfDomain } from "./tenant-of-domain.js";
