export { checkEndpointUrl, isPublicAddress, RefusedAddressError } from "./address-guard.js";
export { alertEvaluator, evaluatorName, raise } from "./alert-evaluator.js";
export { alertIdOf } from "./alert-id.js";
export { alertMail } from "./alert-mail.js";
export { alertProjections } from "./alert-projections.js";
export { retryDelay } from "./backoff.js";
export { buildDigest, type DigestKind, lastPeriod, scheduleDigests } from "./digest.js";
export { checkDomainsDns, type DnsStatus, type DnsStatusChecker } from "./dns-watch.js";
export { type FindingMember, noticeSkippedFindings, sendFindings } from "./findings.js";
export { alertsMigrations } from "./migrations/index.js";
export { decideUnnamedSenders } from "./new-senders.js";
export { publishAlerts } from "./publisher.js";
export {
  type AlertView,
  countEndpoints,
  type DeliveryView,
  listAlerts,
  listDeliveries,
  listEndpoints,
  type WebhookEndpointView,
} from "./queries.js";
export { setAlertRule } from "./rule-commands.js";
export {
  defaultParams,
  type EffectiveRule,
  InvalidRuleError,
  isRuleKind,
  ruleKinds,
  ruleSpecs,
  tenantRule,
  tenantRules,
} from "./rules.js";
export type { AlertsSchema } from "./schema.js";
export { type AlertsSettings, alertsSettings } from "./settings.js";
export { checkSilentDomains } from "./silent-domains.js";
export { type AlertsJob, type AlertsOptions, type RunningAlerts, startAlerts } from "./start-alerts.js";
export { maskedUrl } from "./url-mask.js";
export {
  addEndpoint,
  changeEndpoint,
  disableEndpoint,
  InvalidEndpointError,
  redeliver,
  UnknownEndpointError,
} from "./webhook-commands.js";
export { endpointWants, webhookBody } from "./webhook-payload.js";
export { sealClearWebhookSecrets, webhookSecret } from "./webhook-secrets.js";
export { type SendLimits, type SendOutcome, sendWebhook } from "./webhook-sender.js";
