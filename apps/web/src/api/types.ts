/** The API's answers, as docs/api.md describes them. Counters are decimal strings. */

export interface ListAnswer<R> {
  status: "SUCCESS";
  total: number | string;
  records: R[];
}

export interface Counters {
  Volume: string;
  DMARC: string;
  DMARCUnaligned: string;
  DMARCUnalignedARCPass: string | null;
  DKIMAligned: string;
  DKIM: string;
  DKIMFailed: string;
  SPFAligned: string;
  SPF: string;
  SPFFailed: string;
}

export interface DomainRecord extends Counters {
  Domain: string;
}

export interface OrganizationRecord extends Counters {
  Organization: string;
}

export interface SourceRecord extends Counters {
  SourceDomain: string;
  DomainPublished: string;
  Organization: string;
  SourceIp: string;
  Disposition: string;
  ARC: string | null;
  DispositionCount: string;
  LastDate: string;
  SPFDomain: string;
  DKIMDomain: string;
  /** Issue 23's names of the source IP, each "" when unknown (docs/api.md). */
  Service: string;
  ServiceType: string;
  ASN: string;
  ASNOrganization: string;
  Country: string;
}

export interface ForensicRecord {
  ForensicId: string;
  Subject: string;
  Domain: string;
  Received: string;
  Amount: string;
  Headers: string;
}

/** GET failure_report: one report, with what it says of the message (null where it does not). */
export interface ForensicDetail extends ForensicRecord {
  FeedbackType: string | null;
  SourceIp: string | null;
  AuthFailure: string | null;
  DeliveryResult: string | null;
  SpfResult: string | null;
  DkimResult: string | null;
}

export interface TenantDomainRecord {
  Domain: string;
  DomainGroup: string | null;
  Added: string;
  SafeSpfStatus: "pending" | "computed" | "failed" | null;
}

export interface HistoryRecord {
  Revision: string;
  Event: string;
  Time: string;
  CausedBy: string;
  CorrelationId: string | null;
  Description: string;
  /** The address of the person who caused it, when they are of the tenant; null otherwise. */
  CausedByEmail: string | null;
}

export interface SafeSpf {
  original: string;
  status: "pending" | "computed" | "failed";
  records: { name: string; value: string }[];
  lookups_before: number | null;
  lookups_after: number | null;
  warnings: string[];
  last_computed: string | null;
  last_error: string | null;
  retrying: boolean;
  last_checked: string | null;
  next_check: string | null;
  refresh_state: "current" | "stale" | "failing" | null;
  refresh: string | null;
}

export interface DomainStatus {
  domain: string;
  checked_at: string;
  ok: boolean;
  dmarc: {
    name: string;
    record: string | null;
    present: boolean;
    valid: boolean;
    error: string | null;
    policy: string | null;
    pct: number | null;
    rua: string[];
    rua_points_here: boolean | null;
  };
  spf: {
    record: string | null;
    present: boolean;
    lookups: number | null;
    reaches_safe_spf_root: boolean | null;
  };
  problems: { code: string; message: string }[];
}

export interface InputItem {
  kind: "aggregate" | "failure" | "rejected";
  domain?: string;
  rows?: number | null;
  messages?: number | null;
  status?: string;
  code?: string;
  reason?: string;
}

export interface InputRecord {
  Sha256: string;
  Bytes: number;
  Channel: string;
  Outcome: "received" | "stored" | "duplicate" | "rejected";
  Code: string | null;
  Reason: string | null;
  Items: InputItem[];
  TimesReceived: number;
  FirstSeen: string;
  LastSeen: string;
  ProcessedAt: string | null;
}

export interface UserRecord {
  UserId: string;
  Email: string;
  Role: "admin" | "viewer";
  PasswordSet: boolean;
  Added: string;
  LastSignIn: string | null;
}

export interface ApiKeyRecord {
  KeyId: string;
  Prefix: string;
  Scopes: string[];
  Created: string;
  Revoked: string | null;
}

export interface ActivityRecord {
  Event: string;
  Subject: string;
  SubjectEmail: string | null;
  CausedBy: string;
  CausedByEmail: string | null;
  Time: string;
}

export type Capability = "read" | "write" | "ingest" | "admin";

export interface Caller {
  kind: "session" | "key";
  tenant: { id: string; name: string; region: string };
  user: { id: string; email: string | null } | null;
  role: "admin" | "viewer" | null;
  capabilities: Capability[];
  csrf_token: string | null;
  expires_at: string | null;
  report_addresses: string[];
  /** Which mail intake channels run; null when the API does not know (a process of its own). */
  mail_intake: { smtp: boolean; imap: boolean } | null;
}

// Issue 23's endpoints, not served yet: the shapes the views that wait for them take. The
// navigation shows those views only once GET /api/ links the endpoint.

/** GET aggregate_by_date (served): one record per day, ISO week or month of the period, `Date` its first day. */
export interface DateRecord extends Counters {
  Date: string;
  DispositionNone: string;
  DispositionQuarantine: string;
  DispositionReject: string;
}

/** GET aggregate_by_sender: the inventory of sending services, with their approval per domain. */
export interface SenderRecord extends Counters {
  Domain: string;
  /** The service; for an unknown source its base domain, its AS's organisation or "unknown". */
  Service: string;
  /** "" for an unknown source. */
  ServiceType: string;
  SenderKind: "service" | "base_domain" | "asn" | "unknown";
  /** What named it: the confirmed reverse name, an authentication domain, the AS; null for unknown. */
  NamedBy: "rdns" | "auth_domain" | "asn" | null;
  /** "" when unknown, like the other text fields. */
  ASN: string;
  ASNOrganization: string;
  Country: string;
  SourceIPs: string;
  DMARCShare: string;
  SPFAlignedShare: string;
  DKIMAlignedShare: string;
  Approved: boolean | null;
}

/** GET sender_approvals: a decision in force, and the addresses its service gained since. */
export interface SenderApprovalRecord {
  Domain: string;
  Kind: "service" | "range";
  /** The service as aggregate_by_sender names it, or the range (CIDR). */
  Sender: string;
  Approved: boolean;
  /** null: not recorded (a range, or a decision taken before addresses were recorded). */
  AddressesAtApproval: number | null;
  AddressesNow: number | null;
  /** null when unknown (see AddressesAtApproval). */
  AddedCount: number | null;
  /** The first 1,000 of them, bytewise. */
  AddedSinceApproval: string[] | null;
}

/** GET policy_impact: per domain and sender, the failing messages a stricter policy would stop. */
export interface PolicyImpactRecord {
  Domain: string;
  Service: string;
  ServiceType: string;
  SenderKind: "service" | "base_domain" | "asn" | "unknown";
  Approved: boolean | null;
  SourceIPs: string;
  Stopped: string;
  Forwarded: string;
  LegitimateAtRisk: string;
  AbuseStopped: string;
}

/** GET policy_impact's answer: the records and their totals over every sender. */
export interface PolicyImpactAnswer extends ListAnswer<PolicyImpactRecord> {
  policy: "quarantine" | "reject";
  totals: {
    Volume: string;
    DMARC: string;
    Stopped: string;
    Forwarded: string;
    LegitimateAtRisk: string;
    AbuseStopped: string;
  };
}

/** GET alert_rules (docs/alerts.md). */
export interface AlertRuleRecord {
  rule: string;
  enabled: boolean;
  params: Record<string, number>;
  set: boolean;
  description: string;
}

/** GET webhooks: never the secret. */
export interface WebhookRecord {
  id: string;
  url: string;
  alert_types: string[];
  description: string;
  enabled: boolean;
  disabled_reason: string | null;
  /** Paused by the service after failing too long (its deliveries kept); null otherwise. */
  paused_at: string | null;
  paused_reason: string | null;
  created_at: string;
  updated_at: string;
  /** How its deliveries go: the last success, the last failure as a category, what waits. */
  health: {
    last_success_at: string | null;
    last_failure_at: string | null;
    last_failure: string | null;
    failing_since: string | null;
    pending: number;
  };
}

/** A value of an alert's figures or of one of its items. */
export type AlertValue = string | number | boolean | null;

/** GET alerts: one alert, its figures and the finding's members. */
export interface AlertRecord {
  id: string;
  rule: string;
  domain: string | null;
  period: { start: string; end: string; key: string };
  summary: string;
  figures: Record<string, AlertValue>;
  items: Record<string, AlertValue>[];
  so_far: boolean;
  revises: string | null;
  caused_by: { stream: string; position: string }[];
  raised_at: string;
  acknowledged_at: string | null;
  acknowledged_by: string | null;
}

/** GET webhook_deliveries: one alert to one endpoint. */
export interface DeliveryRecord {
  id: string;
  alert_id: string;
  endpoint_id: string;
  status: "pending" | "delivered" | "failed" | "endpoint_disabled";
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
}

/** GET tls_by_domain: SMTP TLS sessions (RFC 8460) per policy domain and policy type. */
export interface TlsDomainRecord {
  Domain: string;
  PolicyType: string;
  Reports: string;
  Sessions: string;
  Successful: string;
  Failed: string;
}

/** GET tls_failures: failed sessions per failure-details key ("" for a field left out). */
export interface TlsFailureRecord {
  Domain: string;
  PolicyType: string;
  ResultType: string;
  SendingMtaIp: string;
  ReceivingMxHostname: string;
  ReceivingIp: string;
  Organization: string;
  FailedSessions: string;
}

/** GET tls_by_date: the series of sessions per bucket, every bucket present. */
export interface TlsDateRecord {
  Date: string;
  Reports: string;
  Sessions: string;
  Successful: string;
  Failed: string;
}
