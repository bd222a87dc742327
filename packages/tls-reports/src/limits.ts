/**
 * Bounds on one TLS report. Real reports are a few KiB: one policy per MX pattern, a handful of
 * failure details. Past any bound the report is refused and kept with the reason.
 */
export const tlsLimits = {
  /** The JSON text of one report, after any decompression. */
  maxJsonBytes: 8 * 1024 * 1024,
  /** Objects and arrays inside each other: a report is 5 deep (report, policies, entry, failure-details, detail). */
  maxDepth: 8,
  /** Entries of `policies`. */
  maxPolicies: 1000,
  /** failure-details entries of the whole report. */
  maxFailureDetails: 10_000,
  /** Entries of one policy-string or mx-host list. */
  maxListEntries: 256,
  /** Characters of one text field. */
  maxFieldChars: 1024,
  /** Sessions one count may hold: far below 2^53, so sums over many reports stay exact. */
  maxSessions: 1_000_000_000_000,
  /** A report's date range: at most this long (RFC 8460 reports cover a day). */
  maxRangeSeconds: 31 * 86_400,
} as const;
