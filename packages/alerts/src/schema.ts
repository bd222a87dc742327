import type { AlertRuleKind } from "@dmarc-ledger/events";
import type { ColumnType, Generated } from "kysely";

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

// Read models, projected from the events (alert-projections.ts): replay rebuilds them.

/** A rule a tenant set; a rule without a row has its defaults (rules.ts). */
export interface AlertRuleTable {
  tenant_id: string;
  rule: AlertRuleKind;
  enabled: boolean;
  /** JSON object of numbers. */
  params: string;
  updated_at: Timestamp;
}

export interface WebhookEndpointTable {
  endpoint_id: string;
  tenant_id: string;
  url: string;
  /** JSON array of rule kinds; [] means every kind. */
  alert_types: string;
  description: string;
  enabled: boolean;
  disabled_reason: string | null;
  /** Paused by the service after failing too long (WebhookEndpointPaused), and why; null: not paused. */
  paused_at: NullableTimestamp;
  paused_reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Every alert raised (AlertRaised), for GET /alerts. */
export interface AlertTable {
  alert_id: string;
  /** The AlertRaised event's position, decimal text. */
  position: string;
  tenant_id: string;
  rule: AlertRuleKind;
  domain: string | null;
  period_start: Timestamp;
  period_end: Timestamp;
  summary: string;
  /** The AlertRaised payload as JSON. */
  payload: string;
  raised_at: Timestamp;
  /** When it was acknowledged (AlertAcknowledged); null while it is open. */
  acknowledged_at: NullableTimestamp;
  /** Who acknowledged it: `user:<id>` or `key:<id>`; null while it is open. */
  acknowledged_by: ColumnType<string | null, string | null | undefined, string | null>;
}

// The evaluator's state: not projections of allProjections, so that a replay of the read models
// neither rebuilds them nor raises anything again. The evaluator (alert-evaluator.ts) writes them
// in the transaction that moves its own checkpoint (`alert_evaluator`).

/** Who owns a domain, as the evaluator has seen it so far in the events' order. */
export interface AlertDomainOwnerTable {
  domain: string;
  tenant_id: string;
}

/** What the evaluator knows of a domain's reports. */
export interface AlertDomainStateTable {
  domain: string;
  tenant_id: string;
  /** The first report seen for the domain: its senders are the baseline, not "new". */
  first_report: string;
  /** The end of the newest report's period (no_reports). */
  last_report_end: Timestamp;
  /** When that report arrived. */
  last_report_at: Timestamp;
  /** The stream and position of that report's event (the no_reports alert's cause). */
  last_stream: string;
  last_position: string;
}

export interface AlertKnownSenderTable {
  domain: string;
  source_ip: string;
  first_seen: Timestamp;
}

/** Messages and DMARC failures per domain and UTC day of the reports' begin. */
export interface AlertDomainDayTable {
  domain: string;
  day: string;
  messages: ColumnType<string, string | number, string | number>;
  failed: ColumnType<string, string | number, string | number>;
}

/** The Safe SPF result last seen per domain (safe_spf_changed). */
export interface AlertSafeSpfTable {
  domain: string;
  records: string;
}

/**
 * Alerts decided and not yet recorded as events and fanned out (publisher.ts). Written in the
 * evaluator's transaction, so a decision survives a crash; the id is deterministic, so deciding
 * again writes nothing.
 */
export interface AlertOutboxTable {
  alert_id: string;
  /** The AlertRaised payload as JSON. */
  payload: string;
  published: boolean;
  /**
   * The position of the newest event that caused it: it is fanned out once the endpoints' and the
   * users' read models have reached it, so that an endpoint or a person added before the report
   * arrived is not missed because the evaluator ran ahead of the projector.
   */
  after_position: ColumnType<string, string, string>;
  created_at: Timestamp;
}

/** One alert to one webhook endpoint: the delivery log and the retry schedule. */
export interface WebhookDeliveryTable {
  delivery_id: string;
  alert_id: string;
  endpoint_id: string;
  tenant_id: string;
  /** The body sent, the same on every attempt. */
  body: string;
  /** pending, delivered, failed (gave up), or endpoint_disabled. */
  status: string;
  attempts: number;
  next_attempt_at: Timestamp;
  first_attempt_at: NullableTimestamp;
  last_attempt_at: NullableTimestamp;
  last_status: number | null;
  last_error: string | null;
  lease_until: NullableTimestamp;
  delivered_at: NullableTimestamp;
  created_at: Timestamp;
}

/** The signing secret of an endpoint: shown once when made, never in an event or a log. */
export interface WebhookSecretTable {
  endpoint_id: string;
  secret: string;
}

/** An endpoint's health and its queue's backoff (delivery-worker.ts). */
export interface WebhookEndpointHealthTable {
  endpoint_id: string;
  last_success_at: NullableTimestamp;
  last_failure_at: NullableTimestamp;
  /** The last failure's category (webhook-sender.ts, FailureCategory). */
  last_failure: string | null;
  /** Since when every attempt has failed; null while it succeeds. */
  failing_since: NullableTimestamp;
  /** Attempts failed in a row. */
  failures: Generated<number>;
  /** Until when the endpoint's queue waits after a failure. */
  retry_at: NullableTimestamp;
}

/** One alert to one person by e-mail. */
export interface AlertEmailTable {
  email_id: string;
  alert_id: string;
  tenant_id: string;
  /** The person it goes to: their address is opened (sealed, user_account) when it is sent. */
  user_id: string;
  status: string;
  attempts: number;
  next_attempt_at: Timestamp;
  last_error: string | null;
  lease_until: NullableTimestamp;
  sent_at: NullableTimestamp;
}

/** A digest of one period for one person of a tenant (digest.ts): made once, then sent. */
export interface AlertDigestTable {
  /** tenant, person, kind and period start: the key that makes it go out once. */
  digest_id: string;
  tenant_id: string;
  /** The person it goes to: their address is opened (sealed, user_account) when it is sent. */
  user_id: string;
  period_start: Timestamp;
  period_end: Timestamp;
  subject: string;
  text: string;
  html: string;
  /** pending, sent, or unchanged (nothing changed in its period: not sent). */
  status: string;
  attempts: number;
  next_attempt_at: Timestamp;
  last_error: string | null;
  lease_until: NullableTimestamp;
  sent_at: NullableTimestamp;
}

/** What the last check of live DNS saw for a domain (dns-watch.ts). */
export interface AlertDnsStateTable {
  domain: string;
  tenant_id: string;
  dmarc_record: string | null;
  spf_record: string | null;
  /** JSON array of the onboarding check's problem codes. */
  problems: string;
  checked_at: Timestamp;
}

/** What names a source IP, from its latest SourceIpResolved (as source_ip_name shows it). */
export interface AlertSourceNameTable {
  source_ip: string;
  service_name: string | null;
  /** The registrable domain of the forward-confirmed name; "" when there is none. */
  source_domain: string | null;
  asn: ColumnType<string | null, string | number | null, string | number | null>;
  asn_organization: string | null;
}

/** A tenant's decision on a sender (kind `service`: its name; `range`: a CIDR) for its domain. */
export interface AlertSenderApprovalTable {
  domain: string;
  kind: "service" | "range";
  sender: string;
  approved: boolean;
}

/** Messages failing DMARC from a sender not approved for the domain, per UTC day of the reports. */
/** One finding (tenant, rule, domain, report day): its members and what of it was sent (findings.ts). */
export interface AlertFindingTable {
  tenant_id: string;
  rule: AlertRuleKind;
  domain: string;
  day: string;
  /** JSON: member key → the member (a new sender: its name, kind and addresses). */
  members: string;
  /** JSON: the events that caused it, the first and the latest. */
  causes: string;
  changed_at: Date;
  /** Changed since it was last looked at by the sender. */
  pending: boolean;
  first_alert_id: string | null;
  /** Alerts sent of it (the first and its updates). */
  notices: number;
  /** JSON: the member keys the alerts sent so far listed. */
  sent_members: string;
  /** The verdict the last alert sent said (a threshold met); null before any. */
  sent_verdict: boolean | null;
}

export interface AlertSkippedFindingTable {
  tenant_id: string;
  rule: AlertRuleKind;
  domain: string;
  day: string;
  recorded_at: Date;
  noticed: boolean;
}

export interface AlertSourceDayTable {
  domain: string;
  day: string;
  source_ip: string;
  messages: ColumnType<string, string | number, string | number>;
  passed: ColumnType<string, string | number, string | number>;
}

export interface AlertTlsDayTable {
  domain: string;
  day: string;
  /** "" for the day's totals, else one failure result type's failed sessions. */
  result_type: string;
  successful: ColumnType<string, string | number, string | number>;
  failed: ColumnType<string, string | number, string | number>;
}

export interface AlertTlsKnownResultTable {
  domain: string;
  result_type: string;
  first_seen: Date;
}

export interface AlertSenderDayTable {
  domain: string;
  sender: string;
  day: string;
  failed: ColumnType<string, string | number, string | number>;
}

/**
 * Failing messages of source IPs not named yet (the resolver names an IP after its first report),
 * decided when its SourceIpResolved comes; dropped after ALERT_MAX_EVENT_AGE.
 */
export interface AlertUnnamedFailingTable {
  domain: string;
  source_ip: string;
  day: string;
  failed: ColumnType<string, string | number, string | number>;
  recorded_at: Timestamp;
  stream: string;
  position: string;
}

/** The services and base domains seen sending for a domain (new_sender by name). */
export interface AlertKnownNameTable {
  domain: string;
  sender: string;
  first_seen: Timestamp;
}

/**
 * A source IP new for a domain and not named yet: decided by its name when its SourceIpResolved
 * comes, else by its address after ALERT_NAME_WAIT (new-senders.ts).
 */
export interface AlertUnnamedNewTable {
  domain: string;
  source_ip: string;
  tenant_id: string;
  /** Seen in the domain's first report: its name becomes known, nothing is raised. */
  baseline: boolean;
  period_start: string;
  period_end: string;
  /** The new_sender alert's figures as JSON. */
  figures: string;
  recorded_at: Timestamp;
  stream: string;
  position: string;
}

export interface AlertsSchema {
  alert_known_name: AlertKnownNameTable;
  alert_unnamed_new: AlertUnnamedNewTable;
  alert_source_name: AlertSourceNameTable;
  alert_sender_approval: AlertSenderApprovalTable;
  alert_sender_day: AlertSenderDayTable;
  alert_finding: AlertFindingTable;
  alert_skipped_finding: AlertSkippedFindingTable;
  alert_source_day: AlertSourceDayTable;
  alert_tls_day: AlertTlsDayTable;
  alert_tls_known_result: AlertTlsKnownResultTable;
  alert_unnamed_failing: AlertUnnamedFailingTable;
  alert_dns_state: AlertDnsStateTable;
  alert_digest: AlertDigestTable;
  alert_rule: AlertRuleTable;
  webhook_endpoint: WebhookEndpointTable;
  alert: AlertTable;
  alert_domain_owner: AlertDomainOwnerTable;
  alert_domain_state: AlertDomainStateTable;
  alert_known_sender: AlertKnownSenderTable;
  alert_domain_day: AlertDomainDayTable;
  alert_safe_spf: AlertSafeSpfTable;
  alert_outbox: AlertOutboxTable;
  webhook_delivery: WebhookDeliveryTable;
  webhook_secret: WebhookSecretTable;
  webhook_endpoint_health: WebhookEndpointHealthTable;
  alert_email: AlertEmailTable;
}
