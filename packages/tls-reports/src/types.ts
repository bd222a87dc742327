/** The result types of RFC 8460 §4.3 (negotiation failures, then policy failures). */
export const rfc8460ResultTypes = [
  "starttls-not-supported",
  "certificate-host-mismatch",
  "certificate-expired",
  "certificate-not-trusted",
  "validation-failure",
  "tlsa-invalid",
  "dnssec-invalid",
  "dane-required",
  "sts-policy-fetch-error",
  "sts-policy-invalid",
  "sts-webpki-invalid",
] as const;

/** The policy types of RFC 8460 §4.3 ("sts", "tlsa", "no-policy-found"); others are kept as sent. */
export const rfc8460PolicyTypes = ["sts", "tlsa", "no-policy-found"] as const;

/** One entry of a policy's failure-details, as the report sent it (names normalised). */
export interface TlsFailureDetail {
  /** As sent, lower-case: one of rfc8460ResultTypes, or a reporter's own word kept as it is. */
  resultType: string;
  /** RFC 5952 / dotted form when it is an address, else as sent; null when absent (Microsoft). */
  sendingMtaIp: string | null;
  /** Lower-case without the final dot; null when absent. */
  receivingMxHostname: string | null;
  receivingMxHelo: string | null;
  receivingIp: string | null;
  failedSessions: number;
  /** `additional-information` or the RFC's schema name `additional-info-uri`. */
  additionalInformation: string | null;
  failureReasonCode: string | null;
}

export interface TlsPolicyResult {
  /** Lower-case: sts, tlsa, no-policy-found, or what the reporter wrote. */
  policyType: string;
  /**
   * Lower-case without the final dot. A no-policy-found entry without one (Postfix's reporter)
   * takes the report's other policies' domain; "" when the report names none.
   */
  policyDomain: string;
  policyStrings: string[];
  /** `mx-host` or `mx-host-pattern`, one string or a list. */
  mxHosts: string[];
  successfulSessions: number;
  failedSessions: number;
  failures: TlsFailureDetail[];
}

/** An SMTP TLS report (RFC 8460 §4), validated and normalised. */
export interface TlsReport {
  /** Hex SHA-256 of organization-name and report-id: the same report from any channel. */
  identity: string;
  /** `organization-name` as sent (trimmed). */
  organization: string;
  contactInfo: string | null;
  reportId: string;
  /** `date-range`, Unix seconds. */
  begin: number;
  end: number;
  policies: TlsPolicyResult[];
  /** What was read leniently (a field in another spelling, a domain taken from another policy). */
  warnings: string[];
}
