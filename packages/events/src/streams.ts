import { createHash } from "node:crypto";

/** One aggregate, one stream (docs/architecture.md, "Streams"). */
export const streams = {
  tenant: (tenantId: string) => `tenant-${tenantId}`,
  /** The stream's existence is the domain's uniqueness check within a region. */
  domain: (domain: string) => `domain-${domain}`,
  /** Every domain claimed under one registrable domain: a domain tree has one owner. */
  registrableDomain: (registrable: string) => `registrable-domain-${registrable}`,
  /** Appended with "no_stream": a report delivered twice is stored once. */
  aggregateReport: (identity: string) => `aggregate-report-${identity}`,
  failureReport: (identity: string) => `failure-report-${identity}`,
  /** Appended with "no_stream", as aggregate reports: one SMTP TLS report (RFC 8460). */
  tlsReport: (identity: string) => `tls-report-${identity}`,
  rejectedInput: (sha256: string) => `rejected-input-${sha256}`,
  /** Reverse-DNS answers for one source IP (as the reports write it, normalised by the parser). */
  sourceIp: (ip: string) => `source-ip-${ip}`,
  /**
   * One person, by the blind index of their address (an HMAC keyed by a key the database's
   * dump does not hold in clear: packages/users' emailIndex): an address is one user.
   */
  user: (emailIndex: string) => `user-${emailIndex}`,
  /** A person's stream as versions before sealed addresses named it: the SHA-256 of the address. */
  legacyUser: (email: string) => `user-${sha256Hex(email)}`,
  /** A tenant's alert rules. */
  alertRules: (tenantId: string) => `alert-rules-${tenantId}`,
  /** One alert; the id is deterministic, so the stream's existence says it was raised. */
  alert: (alertId: string) => `alert-${alertId}`,
  webhook: (endpointId: string) => `webhook-${endpointId}`,
  /** What retention and erasure removed of a tenant's personal data. */
  personalData: (tenantId: string) => `personal-data-${tenantId}`,
  /** Every run of the retention job. */
  retentionRuns: () => "retention-runs",
} as const;

export type StreamCategory =
  | "tenant"
  | "domain"
  | "registrable-domain"
  | "aggregate-report"
  | "failure-report"
  | "tls-report"
  | "rejected-input"
  | "source-ip"
  | "user"
  | "alert-rules"
  | "alert"
  | "webhook"
  | "personal-data"
  | "retention-runs";

export function streamCategory(stream: string): StreamCategory | null {
  for (const category of [
    "aggregate-report",
    "failure-report",
    "tls-report",
    "alert-rules",
    "alert",
    "webhook",
    "rejected-input",
    "personal-data",
    "retention-runs",
    "registrable-domain",
    "source-ip",
    "tenant",
    "user",
    "domain",
  ] as const) {
    if (stream.startsWith(`${category}-`)) return category;
  }
  return null;
}

export function sha256Hex(input: string | Uint8Array): string {
  return createHash("sha256").update(input).digest("hex");
}
