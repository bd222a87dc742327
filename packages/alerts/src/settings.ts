import { duration, integer, oneOf, url } from "@dmarc-ledger/config";
import { z } from "zod";

/** The most webhook endpoints a tenant may have, and the longest URL one may have (by default). */
export const defaultEndpointLimits = { maxEndpoints: 20, maxUrlLength: 2048 };

/** What the alerts read (docs/alerts.md, "Settings"): compose into the settings of the process that runs them. */
export const alertsSettings = {
  /** Webhook retries back off from this delay, doubling, with jitter… */
  WEBHOOK_RETRY_BASE: duration({ minMs: 10, maxMs: 3_600_000, defaultMs: 5000 }),
  /** …up to this one between two attempts… */
  WEBHOOK_RETRY_MAX: duration({ minMs: 10, maxMs: 24 * 3_600_000, defaultMs: 3_600_000 }),
  /** …for this long after the first attempt; then the delivery has failed and its endpoint is disabled. */
  WEBHOOK_RETRY_FOR: duration({ minMs: 10, maxMs: 30 * 86_400_000, defaultMs: 28 * 3_600_000 }),
  /** One attempt, from connecting to the end of the answer's headers and body. */
  WEBHOOK_TIMEOUT: duration({ minMs: 10, maxMs: 120_000, defaultMs: 10_000 }),
  /** Read at most this much of an answer's body (kept for the delivery log); the rest is cut off. */
  WEBHOOK_MAX_RESPONSE_BYTES: integer({ min: 0, max: 10_485_760, default: 65_536 }),
  /** Attempts in flight at once: a slow receiver holds one of them, not the worker. */
  WEBHOOK_CONCURRENCY: integer({ min: 1, max: 256, default: 16 }),
  /**
   * "yes" lets endpoints resolve to private, loopback and link-local addresses (tests, a receiver
   * on the same network); by default they are refused, after resolving (no DNS rebinding).
   */
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: oneOf(["no", "yes"], "no"),
  /** The most webhook endpoints one tenant may have (enabled or not): more is refused when added. */
  WEBHOOK_MAX_ENDPOINTS: integer({ min: 1, max: 1000, default: defaultEndpointLimits.maxEndpoints }),
  /** The longest URL a webhook endpoint may have, in characters. */
  WEBHOOK_MAX_URL_LENGTH: integer({ min: 64, max: 8192, default: defaultEndpointLimits.maxUrlLength }),
  /** The SMTP relay alert mail goes through: smtp://user:pass@host:port or smtps://…; unset: no mail. */
  ALERT_SMTP_URL: url(["smtp", "smtps"]),
  ALERT_MAIL_FROM: oneOfAddress(),
  /** The digest each person of a tenant gets by mail (with ALERT_SMTP_URL): off, daily or weekly. */
  ALERT_DIGEST: oneOf(["off", "daily", "weekly"], "daily"),
  /** How often the silent-domain check (no_reports) and the digest schedule run. */
  ALERT_CHECK_INTERVAL: duration({ minMs: 100, maxMs: 86_400_000, defaultMs: 3_600_000 }),
  /** How often every domain's DMARC and SPF records are checked in live DNS (dns_record_changed, onboarding_bad). */
  ALERT_DNS_CHECK_INTERVAL: duration({ minMs: 100, maxMs: 7 * 86_400_000, defaultMs: 6 * 3_600_000 }),
  /**
   * How long a new source IP waits for the resolver's name before new_sender decides it by its
   * address (checked every ALERT_CHECK_INTERVAL); 0s: at once, by its address unless named already.
   */
  ALERT_NAME_WAIT: duration({ minMs: 0, maxMs: 7 * 86_400_000, defaultMs: 3_600_000 }),
  /**
   * How long a finding (a rule, domain and report day) stays unchanged before its alert is sent,
   * so that a batch of reports gives one alert with the day's figures, not one per report.
   */
  ALERT_SETTLE: duration({ minMs: 0, maxMs: 3_600_000, defaultMs: 30_000 }),
  /** Events older than this when the evaluator sees them raise nothing (a first start over a long history). */
  ALERT_MAX_EVENT_AGE: duration({ minMs: 1000, maxMs: 365 * 86_400_000, defaultMs: 2 * 86_400_000 }),
};

/** The sender of alert mail: an address, or a name and an address ("Alerts <alerts@example.com>"). */
function oneOfAddress() {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return "dmarc-ledger@localhost";
      if (!/^([^<>]*<)?[^@\s<>]+@[^@\s<>]+>?$/.test(value.trim())) {
        ctx.addIssue({ code: "custom", message: `"${value}" is not an address such as alerts@example.com` });
        return z.NEVER;
      }
      return value.trim();
    });
}

export interface AlertsSettings {
  WEBHOOK_RETRY_BASE: number;
  WEBHOOK_RETRY_MAX: number;
  WEBHOOK_RETRY_FOR: number;
  WEBHOOK_TIMEOUT: number;
  WEBHOOK_MAX_RESPONSE_BYTES: number;
  WEBHOOK_CONCURRENCY: number;
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: "no" | "yes";
  WEBHOOK_MAX_ENDPOINTS: number;
  WEBHOOK_MAX_URL_LENGTH: number;
  ALERT_SMTP_URL: string | undefined;
  ALERT_MAIL_FROM: string;
  ALERT_DIGEST: "off" | "daily" | "weekly";
  ALERT_CHECK_INTERVAL: number;
  ALERT_DNS_CHECK_INTERVAL: number;
  ALERT_NAME_WAIT: number;
  ALERT_SETTLE: number;
  ALERT_MAX_EVENT_AGE: number;
}
