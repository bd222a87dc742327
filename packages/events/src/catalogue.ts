/**
 * The event catalogue: every fact the service records, its payload, and its schema version.
 * Payloads are plain JSON. A payload shape never changes under the same version: a new version
 * gets an upcaster (upcasters.ts) that lifts old events when they are read.
 */

export type Region = "global" | "eu";
export type Scope = "read" | "write" | "ingest";
/** A person's role in a tenant: `admin` may do every write, `viewer` only reads. */
export type Role = "admin" | "viewer";

export interface TenantCreated {
  tenantId: string;
  name: string;
  region: Region;
}

export interface ApiKeyIssued {
  tenantId: string;
  keyId: string;
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  keyHash: string;
  /** The readable start of the key (dlk_eu_ab12…), to tell keys apart in listings. */
  keyPrefix: string;
  scopes: Scope[];
  region: Region;
}

export interface ApiKeyRevoked {
  tenantId: string;
  keyId: string;
}

export interface DomainAdded {
  domain: string;
  tenantId: string;
}

/**
 * A domain claimed in its registrable domain's tree (stream `registrable-domain-<name>`), before
 * its DomainAdded: the tree stream, appended with the expected revision, serialises every claim
 * under one registrable domain, so that a parent and a child of it cannot go to two tenants.
 */
export interface DomainReserved {
  domain: string;
  tenantId: string;
  registrableDomain: string;
}

/** The tenant gave the domain up: its reports stop counting for it, and it can be claimed again. */
export interface DomainRemoved {
  domain: string;
  tenantId: string;
}

/** The claim on a domain in its tree is released (after DomainRemoved). */
export interface DomainReleased {
  domain: string;
  tenantId: string;
  registrableDomain: string;
}

export interface DomainGroupSet {
  domain: string;
  tenantId: string;
  /** null removes the domain from its group. */
  group: string | null;
}

/**
 * A sender approved or not for a domain, or the decision cleared (`approved` null). In the
 * domain's stream, so the audit trail (GET history) tells who decided. The sender is a service
 * (as aggregate_by_sender names it: a service name, or for unknown sources a base domain or an
 * AS's organisation) or an IP range (CIDR); exactly one of the two is set.
 */
export interface SenderApprovalSet {
  domain: string;
  tenantId: string;
  service: string | null;
  /** Normalised CIDR (network address, prefix length). */
  range: string | null;
  approved: boolean | null;
  /**
   * The addresses a decided service grouped for the domain when it was decided (v2), so that a
   * replay knows them whatever naming says later; null for a range, a cleared decision, a
   * decision taken without reading them, and v1 events (membership unknown).
   */
  members: ApprovalMembers | null;
}

/** The most addresses a SenderApprovalSet lists (about 400 KB of IPv6 addresses at most). */
export const approvalMembersLimit = 10_000;

/** A service's addresses for a domain at a decision: every one up to approvalMembersLimit. */
export interface ApprovalMembers {
  /** The addresses, sorted bytewise; the first approvalMembersLimit when there are more. */
  addresses: string[];
  /** How many there were: more than `addresses` holds when the list was cut. */
  count: number;
}

export interface SpfOriginalUpdated {
  domain: string;
  tenantId: string;
  original: string;
}

export interface SafeSpfRecordComputed {
  domain: string;
  tenantId: string;
  original: string;
  records: { name: string; value: string }[];
  lookupsBefore: number;
  lookupsAfter: number;
  networks: string[];
  added: string[];
  removed: string[];
  warnings: string[];
  minTtl: number | null;
}

export interface SafeSpfComputationFailed {
  domain: string;
  tenantId: string;
  original: string;
  code: string;
  message: string;
  /** Whether the failure is transient (DNS timeout) and the computation will be retried. */
  retrying: boolean;
}

export interface AggregatePolicy {
  domain: string;
  adkim: string | null;
  aspf: string | null;
  p: string | null;
  sp: string | null;
  np: string | null;
  pct: number | null;
  fo: string | null;
  testing: string | null;
  discoveryMethod: string | null;
}

export interface AggregateRowRecord {
  sourceIp: string;
  count: number;
  disposition: string;
  policyDkim: string;
  policySpf: string;
  reasons: { type: string; comment: string | null }[];
  arc: "pass" | "fail" | null;
  headerFrom: string;
  envelopeFrom: string | null;
  envelopeTo: string | null;
  dkim: { domain: string; selector: string | null; result: string; humanResult: string | null }[];
  spf: { domain: string; scope: string | null; result: string }[];
}

/**
 * One received aggregate report, or one chunk of a large one (no event is larger than about
 * 1 MiB). Every chunk repeats the header so that each event can be projected on its own.
 */
export interface AggregateReportReceived {
  identity: string;
  schema: string;
  orgName: string;
  organization: string;
  email: string;
  reportId: string;
  begin: number;
  end: number;
  policy: AggregatePolicy;
  rows: AggregateRowRecord[];
  /** Chunks are appended in order; the last one says so, which marks the report complete. */
  chunk: { index: number; last: boolean };
  /** How the report reached us: "import:<file name>", "smtp", "imap", "upload". */
  source: string;
  warnings: string[];
}

/**
 * A person's data in an event, sealed or (encryption off, or an event written before encryption)
 * in clear. Sealed: AES-256-GCM under the data key `keyId` (packages/personal-data), of the tenant
 * the data belongs to (`-` when no tenant owns it) and the month it arrived; deleting that key
 * makes it unreadable for good without rewriting the event (docs/privacy.md).
 */
export type Personal<T> = { sealed: SealedData } | { clear: T };

export interface SealedData {
  keyId: string;
  /** The tenant the key is kept for, `-` for data no tenant owns: who may erase it. */
  tenantId: string;
  /** base64 of the 12-byte nonce, the ciphertext of the JSON of the fields, and the 16-byte tag. */
  data: string;
}

/** The fields of a failure report that can identify a person (docs/privacy.md). */
export interface ForensicPersonalFields {
  subject: string;
  sourceIp: string | null;
  headers: string;
  originalMailFrom: string | null;
  originalRcptTo: string | null;
}

/** Version 1 held the personal fields in clear beside the others (upcast to `personal.clear`). */
export interface ForensicReportReceived {
  identity: string;
  feedbackType: string;
  reportedDomain: string;
  arrivalDate: string | null;
  authFailure: string | null;
  deliveryResult: string | null;
  incidents: number;
  personal: Personal<ForensicPersonalFields>;
  source: string;
  warnings: string[];
}

/** One failure-details entry of a TLS report (packages/tls-reports' TlsFailureDetail). */
export interface TlsFailureRecord {
  resultType: string;
  sendingMtaIp: string | null;
  receivingMxHostname: string | null;
  receivingMxHelo: string | null;
  receivingIp: string | null;
  failedSessions: number;
  additionalInformation: string | null;
  failureReasonCode: string | null;
}

/** One entry of a TLS report's `policies` (packages/tls-reports' TlsPolicyResult). */
export interface TlsPolicyRecord {
  policyType: string;
  /** Lower-case; "" when the report named none for it. */
  policyDomain: string;
  policyStrings: string[];
  mxHosts: string[];
  successfulSessions: number;
  failedSessions: number;
  failures: TlsFailureRecord[];
}

/**
 * One SMTP TLS report (RFC 8460), whole (at most 10,000 failure details: tlsLimits). Stream
 * `tls-report-<identity>`, appended with "no_stream": a report delivered twice is stored once.
 * Nothing in it names a person (MTA addresses and a reporting role address), so it is in clear.
 */
export interface TlsReportReceived {
  identity: string;
  /** `organization-name` as sent. */
  organization: string;
  contactInfo: string | null;
  reportId: string;
  begin: number;
  end: number;
  policies: TlsPolicyRecord[];
  source: string;
  warnings: string[];
}

/**
 * Input we could not process, kept with the reason so it can be re-processed after a fix.
 * Version 1 held the raw bytes in clear (`rawBase64`): they can hold a failure report's message.
 */
export interface ReportRejected {
  source: string;
  reason: string;
  code: string;
  sha256: string;
  bytes: number;
  /** The raw input, base64, when it is at most rawKeepLimit bytes; otherwise null. */
  raw: Personal<{ base64: string }> | null;
}

/**
 * The reverse DNS of one source IP of the reports, as the resolver found it at `resolvedAt`.
 * Replays read the answer from here, never from DNS, so they give the same names.
 */
export interface SourceIpResolved {
  ip: string;
  /**
   * found: PTR names were answered; no_name: the reverse name exists without PTR records;
   * nxdomain: it does not exist; timeout / error: no answer after the retries (tried again later,
   * and an earlier answer stays in force). not_asked (v3): DNS was not asked (yet): the naming is
   * from the offline databases and the reports' evidence alone, given when the source is first seen.
   */
  outcome: "found" | "no_name" | "nxdomain" | "timeout" | "error" | "not_asked";
  /** Every PTR name answered, lower-case without the final dot, in answer order. */
  ptrNames: string[];
  /** The first forward-confirmed PTR name, else the first PTR name; null without one. */
  name: string | null;
  /** Whether `name`'s A or AAAA records hold `ip` (forward-confirmed reverse DNS). */
  confirmed: boolean;
  /** ISO-8601 time of the answer. */
  resolvedAt: string;
  /**
   * What the answer and the offline databases say the source is (v2). null in answers written
   * before v2 (the upcaster's value) or by a resolver run without the databases.
   */
  naming: SourceIpNaming | null;
}

/**
 * The name of a report source beside its reverse DNS: the base domain of the forward-confirmed
 * name, the service that base domain belongs to, and the address's AS and country. The versions
 * of the maps and databases that said so are kept with it, so that a replay after an upgrade
 * gives the same names, and an answer can be told apart from one a newer database gave.
 */
export interface SourceIpNaming {
  /** The registrable domain of the forward-confirmed PTR name; null without one. */
  baseDomain: string | null;
  service: { name: string; type: string } | null;
  asn: { number: number; organization: string } | null;
  /** ISO 3166-1 alpha-2, upper-case. */
  country: string | null;
  sources: { serviceMap: string; asnDatabase: string; countryDatabase: string };
  /**
   * What named `service` (v3): `rdns` (the base domain of the forward-confirmed name),
   * `auth_domain` (a passing DKIM d= or SPF domain of the reports in the map), `asn` (the AS: its
   * service when the AS carries one mail service's mail, else its organisation); null when nothing
   * names the source. v2 answers are upcast with `rdns` when they name a service, else null. The
   * three fields are optional in the type only (a v3 answer always has them): absent reads null.
   */
  namedBy?: "rdns" | "auth_domain" | "asn" | null;
  /** The registrable authentication domain that named the service (namedBy auth_domain); else null. */
  authDomain?: string | null;
  /**
   * The special-purpose range holding the address (ipaddr.js's name: private, carrierGradeNat,
   * loopback, linkLocal, reserved (documentation and others), uniqueLocal, …); null for a public
   * address. Such an address has no AS, country or service.
   */
  addressRange?: string | null;
}

/**
 * A person who signs in to the dashboard. Stream `user-<blind index of the e-mail address>` (an
 * HMAC keyed by a key of packages/personal-data: streams.user), so that an address is one user
 * (created with "no stream", or after the stream's last UserErased); the id is random, so that
 * the trail, which names users by id, carries nothing of their address. Version 1 held the
 * address in clear, on stream `user-<sha256 of the address>` (streams.legacyUser); upcast to
 * `email.clear`.
 */
export interface UserCreated {
  userId: string;
  /** Lower-case, trimmed; sealed under the person's own data key (scope `user:<userId>`). */
  email: Personal<string>;
}

/**
 * The person's account is gone (removed from their last tenant, or their tenant erased): their
 * data key was shredded first, so the address in their UserCreated can never be read again.
 * Their stream may hold a new UserCreated later, if the address is added again.
 */
export interface UserErased {
  userId: string;
}

export interface UserRoleGranted {
  userId: string;
  tenantId: string;
  role: Role;
}

export interface UserRoleRevoked {
  userId: string;
  tenantId: string;
}

/**
 * A one-time set-password link was made for the user. The token is not here (only its hash is
 * kept, outside the events, where it can be deleted once used or expired).
 */
export interface UserPasswordLinkIssued {
  userId: string;
  tenantId: string;
  /** ISO-8601. */
  expiresAt: string;
}

/** The user chose a password through a link. The hash is not here: events are never erased. */
export interface UserPasswordSet {
  userId: string;
  tenantId: string;
}

export interface UserSignedIn {
  userId: string;
  tenantId: string;
}

export interface UserSignedOut {
  userId: string;
  tenantId: string;
  /** Every session of the user ended, not only this one. */
  everywhere: boolean;
}

/** The kinds of alert rule a tenant has (docs/alerts.md). Every one is on for a new tenant. */
export type AlertRuleKind =
  | "new_sender"
  | "unapproved_sender"
  | "dmarc_failure_share"
  | "no_reports"
  | "failure_report"
  | "safe_spf_changed"
  | "safe_spf_failed"
  | "spf_lookup_limit"
  | "dns_record_changed"
  | "onboarding_bad"
  | "backlog_skipped"
  | "tls_failure_share"
  | "tls_new_result"
  | "webhook_disabled";

/**
 * A tenant set one of its alert rules (stream `alert-rules-<tenant id>`): on or off, and its
 * parameters, whole (what is not named takes its default, docs/alerts.md).
 */
export interface AlertRuleSet {
  tenantId: string;
  rule: AlertRuleKind;
  enabled: boolean;
  params: Record<string, number>;
}

/** One member of an alert's finding: a sender of a new_sender or unapproved_sender alert. */
export type AlertItem = Record<string, string | number | boolean | null>;

/**
 * An alert (stream `alert-<id>`, appended with "no stream": the id is derived from the tenant,
 * rule, domain and period, so deciding it twice records it once). v2 added `items`, `soFar` and
 * `revises`; a v1 alert has none of them.
 */
export interface AlertRaised {
  alertId: string;
  tenantId: string;
  rule: AlertRuleKind;
  /** The tenant's domain it is about; null for an alert about the tenant's setup (a webhook). */
  domain: string | null;
  /** What makes it one alert: the period (a day, a window) or the thing (a source IP, a report). */
  period: { start: string; end: string; key: string };
  summary: string;
  figures: Record<string, string | number | boolean | null>;
  /** The finding's members, e.g. each new sender with its figures; empty when it has none. */
  items: AlertItem[];
  /** The figures are those of a report day whose reports may still arrive. */
  soFar: boolean;
  /** The alert whose verdict or members this one updates (a later notice of one finding); else null. */
  revises: string | null;
  /** The events that caused it: their stream and position in the global order. */
  causedBy: { stream: string; position: string }[];
}

/**
 * A person of the tenant (or a key) acknowledged an alert (stream `alert-<id>`, after its
 * AlertRaised): it is seen to, and the dashboard lists it apart from the open ones.
 */
export interface AlertAcknowledged {
  tenantId: string;
  alertId: string;
  /** Who: `user:<id>` or `key:<id>`, as the request's causedBy. */
  by: string;
}

/**
 * A webhook endpoint of a tenant (stream `webhook-<endpoint id>`). Its signing secret is not in
 * the events (they are never erased): it is shown once when the endpoint is made and kept apart.
 */
export interface WebhookEndpointAdded {
  tenantId: string;
  endpointId: string;
  url: string;
  /** The rules whose alerts it receives; empty means all. */
  alertTypes: AlertRuleKind[];
  description: string;
}

export interface WebhookEndpointChanged {
  tenantId: string;
  endpointId: string;
  url: string;
  alertTypes: AlertRuleKind[];
  description: string;
  enabled: boolean;
}

/** Disabled by the service after its deliveries failed for too long (or removed by the tenant). */
export interface WebhookEndpointDisabled {
  tenantId: string;
  endpointId: string;
  reason: string;
}

/**
 * Paused by the service: no delivery to it succeeded for WEBHOOK_PAUSE_AFTER while its deliveries
 * failed. Its pending deliveries are kept, not sent, until it is resumed.
 */
export interface WebhookEndpointPaused {
  tenantId: string;
  endpointId: string;
  reason: string;
  /** Since when its deliveries fail, and its last success (null: none ever), ISO 8601. */
  failingSince: string;
  lastSuccessAt: string | null;
}

/** Resumed by hand after a pause: its kept deliveries are sent again. */
export interface WebhookEndpointResumed {
  tenantId: string;
  endpointId: string;
}

/**
 * How long a tenant's personal data lives, and how /forensic shows it (stream `tenant-<id>`).
 * Until the first one, the defaults of packages/personal-data (90 days, 90 days, aggregates
 * kept, redaction on).
 */
export interface PersonalDataPolicySet {
  tenantId: string;
  /** Days a failure report's personal fields and its /forensic row are kept. */
  failureReportDays: number;
  /** Days the raw archive keeps the bytes of an input naming the tenant's domains. */
  rawInputDays: number;
  /** Days the aggregate facts are kept; null: kept (they count messages, not people). */
  aggregateDays: number | null;
  /** /forensic masks addresses' local parts and removes the subject. */
  redaction: boolean;
}

/**
 * A run of the retention job for one tenant (stream `personal-data-<tenant id>`): what it removed
 * and how much, so that the history shows it. Projections drop the rows it names: a replay
 * drops them again.
 */
export interface RetentionApplied {
  /**
   * Whose data: a tenant's id, a domain's own scope (`domain:<name>`: reports about a domain no
   * tenant had when they arrived) or `-` (rejected inputs nobody sent).
   */
  tenantId: string;
  /** ISO-8601: failure reports received before this are gone (rows dropped, keys shredded). */
  failureReportsBefore: string;
  /** ISO-8601: raw inputs last received before this lost their bytes. */
  rawInputsBefore: string;
  /**
   * Always null: aggregate facts expire by AggregateFactsExpired (same stream), which names the
   * report domains the projections drop them of.
   */
  aggregatesBefore: string | null;
  /** The data keys deleted, by month (YYYY-MM). */
  keysShredded: { keyId: string; month: string }[];
  /** Rows removed: /forensic rows, raw inputs' bytes; aggregateRows always null (see above). */
  removed: { failureReports: number; rawInputs: number; aggregateRows: number | null };
}

/**
 * Retention removed a tenant's aggregate facts counted on UTC days before `before`, by its
 * `aggregateDays` (stream `personal-data-<tenant id>`). The aggregate read models drop the facts
 * of `domains` whose day (the day each part of a report counts on, as every grouping splits it)
 * lies before `before`, and a replay drops them again at the same point of the history. The
 * reports' events stay in the store.
 */
export interface AggregateFactsExpired {
  tenantId: string;
  /** YYYY-MM-DD: facts of days before this one (UTC) are gone. */
  before: string;
  /** The report domains whose facts went: the tenant's domains and their subdomains, at the run. */
  domains: string[];
  /**
   * What went, as the read models held it when the run counted it: the messages (of the daily
   * series) and the rows of each aggregate table.
   */
  removed: { messages: number; rows: Record<string, number> };
}

/**
 * One run of the retention job, whatever it found (stream `retention-runs`): the record that it
 * ran, for an audit, and the totals; what it removed of whom is in the scopes' RetentionApplied.
 */
export interface RetentionRun {
  /** ISO-8601: the time the cutoffs were measured from. */
  ranAt: string;
  /** Key scopes looked at: tenants, domains' own scopes, `-`. */
  scopes: number;
  /** aggregateRows since v2 (0 in v1: aggregate facts were always kept then). */
  removed: { keys: number; failureReports: number; rawInputs: number; aggregateRows: number };
}

/**
 * Everything of a tenant that can identify a person was removed at its request (stream
 * `personal-data-<tenant id>`): its data keys shredded, its /forensic rows and raw inputs' bytes
 * gone, its people's sign-in data deleted. Projections drop the tenant's personal rows.
 */
export interface TenantErased {
  tenantId: string;
  /** The own scopes (`domain:<name>`) of the tenant's report domains, erased with it. */
  scopes: string[];
  keysShredded: number;
  removed: { failureReports: number; rawInputs: number; users: number };
}

export interface EventPayloads {
  TenantCreated: TenantCreated;
  ApiKeyIssued: ApiKeyIssued;
  ApiKeyRevoked: ApiKeyRevoked;
  DomainAdded: DomainAdded;
  DomainReserved: DomainReserved;
  DomainRemoved: DomainRemoved;
  DomainReleased: DomainReleased;
  DomainGroupSet: DomainGroupSet;
  SpfOriginalUpdated: SpfOriginalUpdated;
  SenderApprovalSet: SenderApprovalSet;
  SafeSpfRecordComputed: SafeSpfRecordComputed;
  SafeSpfComputationFailed: SafeSpfComputationFailed;
  AggregateReportReceived: AggregateReportReceived;
  ForensicReportReceived: ForensicReportReceived;
  ReportRejected: ReportRejected;
  SourceIpResolved: SourceIpResolved;
  UserCreated: UserCreated;
  UserErased: UserErased;
  UserRoleGranted: UserRoleGranted;
  UserRoleRevoked: UserRoleRevoked;
  UserPasswordLinkIssued: UserPasswordLinkIssued;
  UserPasswordSet: UserPasswordSet;
  UserSignedIn: UserSignedIn;
  UserSignedOut: UserSignedOut;
  AlertRuleSet: AlertRuleSet;
  AlertRaised: AlertRaised;
  AlertAcknowledged: AlertAcknowledged;
  WebhookEndpointAdded: WebhookEndpointAdded;
  WebhookEndpointChanged: WebhookEndpointChanged;
  WebhookEndpointDisabled: WebhookEndpointDisabled;
  WebhookEndpointPaused: WebhookEndpointPaused;
  WebhookEndpointResumed: WebhookEndpointResumed;
  PersonalDataPolicySet: PersonalDataPolicySet;
  RetentionApplied: RetentionApplied;
  AggregateFactsExpired: AggregateFactsExpired;
  RetentionRun: RetentionRun;
  TenantErased: TenantErased;
  TlsReportReceived: TlsReportReceived;
}

export type EventType = keyof EventPayloads;

/** The schema version each event type is written with today. */
export const currentSchemaVersion: { readonly [K in EventType]: number } = {
  TenantCreated: 1,
  ApiKeyIssued: 1,
  ApiKeyRevoked: 1,
  DomainAdded: 1,
  DomainReserved: 1,
  DomainRemoved: 1,
  DomainReleased: 1,
  DomainGroupSet: 1,
  SpfOriginalUpdated: 1,
  SenderApprovalSet: 2,
  SafeSpfRecordComputed: 1,
  SafeSpfComputationFailed: 1,
  AggregateReportReceived: 1,
  ForensicReportReceived: 2,
  ReportRejected: 2,
  SourceIpResolved: 3,
  UserCreated: 2,
  UserErased: 1,
  UserRoleGranted: 1,
  UserRoleRevoked: 1,
  UserPasswordLinkIssued: 1,
  UserPasswordSet: 1,
  UserSignedIn: 1,
  UserSignedOut: 1,
  AlertRuleSet: 1,
  AlertRaised: 2,
  AlertAcknowledged: 1,
  WebhookEndpointAdded: 1,
  WebhookEndpointChanged: 1,
  WebhookEndpointDisabled: 1,
  WebhookEndpointPaused: 1,
  WebhookEndpointResumed: 1,
  PersonalDataPolicySet: 1,
  RetentionApplied: 1,
  AggregateFactsExpired: 1,
  RetentionRun: 2,
  TenantErased: 1,
  TlsReportReceived: 1,
};

export const eventTypes = Object.keys(currentSchemaVersion) as EventType[];

/** Raw input larger than this is rejected without its bytes (the event would be too large). */
export const rawKeepLimit = 512 * 1024;
