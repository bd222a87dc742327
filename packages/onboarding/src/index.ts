export { isDmarcRecord, mailtoDomain, readDmarcRecord } from "./dmarc-record.js";
export {
  checkDomainStatus,
  type DomainStatus,
  type DomainStatusOptions,
  type DomainStatusProblem,
  spfLookupLimit,
} from "./domain-status.js";
export { type DomainStatusChecker, domainStatusChecker } from "./domain-status-checker.js";
export { type OnboardingSettings, onboardingSettingsFromEnv, onboardingSettingsShape } from "./settings.js";
export { type SpfReach, walkSpf } from "./spf-reach.js";
