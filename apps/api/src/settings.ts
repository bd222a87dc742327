import { alertsSettings } from "@dmarc-ledger/alerts/settings";
import { integer, oneOf, port, url } from "@dmarc-ledger/config";
import { intakeSettingsShape } from "@dmarc-ledger/intake/settings";

/** The variables the API reads: compose into the settings shape of the process that serves it. */
export const apiSettings = {
  PORT: port(8080),
  DMARC_LEDGER_REGION: oneOf(["global", "eu"] as const, "global"),
  PUBLIC_BASE_URL: url(["http", "https"]),
  OTHER_REGION_BASE_URL: url(["http", "https"]),
  RATE_LIMIT_PER_SECOND: integer({ min: 1, max: 1_000_000, default: 20 }),
  RATE_LIMIT_BURST: integer({ min: 1, max: 1_000_000, default: 100 }),
  READ_YOUR_WRITES_TIMEOUT_MS: integer({ min: 0, max: 600_000, default: 5000 }),
  MAX_BODY_BYTES: integer({ min: 1024, max: 100 * 1024 * 1024, default: 64 * 1024 }),
  /** /readyz answers 503 while a projection is more events than this behind the store's head. */
  READY_MAX_LAG: integer({ min: 0, max: 1_000_000_000, default: 1000 }),
  /**
   * Connections one client address (an IPv6 address by its /64) may hold at once, of the 1,000 the
   * API takes in all. Behind a proxy that connects from one address, raise it (up to 1,000).
   */
  MAX_CONNECTIONS_PER_IP: integer({ min: 1, max: 1000, default: 100 }),
  /**
   * Memory for the list endpoints' answers, reused while the read models are unchanged (0: off).
   * Per process; an answer over a sixteenth of it is not kept.
   */
  API_ANSWER_CACHE_BYTES: integer({ min: 0, max: 4 * 1024 * 1024 * 1024, default: 64 * 1024 * 1024 }),
  /** POST /api/reports: the upload and archive limits (MAX_REPORT_BYTES, …). */
  ...intakeSettingsShape,
  /** PUT add_webhook / change_webhook refuse private addresses unless this is "yes" (as deliveries do). */
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: alertsSettings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES,
  /** PUT add_webhook refuses a tenant's endpoint past this many, or a URL longer than this. */
  WEBHOOK_MAX_ENDPOINTS: alertsSettings.WEBHOOK_MAX_ENDPOINTS,
  WEBHOOK_MAX_URL_LENGTH: alertsSettings.WEBHOOK_MAX_URL_LENGTH,
};

export interface ApiSettings {
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: "no" | "yes";
  WEBHOOK_MAX_ENDPOINTS: number;
  WEBHOOK_MAX_URL_LENGTH: number;
  PORT: number;
  API_ANSWER_CACHE_BYTES: number;
  DMARC_LEDGER_REGION: "global" | "eu";
  PUBLIC_BASE_URL: string | undefined;
  OTHER_REGION_BASE_URL: string | undefined;
  RATE_LIMIT_PER_SECOND: number;
  RATE_LIMIT_BURST: number;
  READ_YOUR_WRITES_TIMEOUT_MS: number;
  MAX_BODY_BYTES: number;
  READY_MAX_LAG: number;
  MAX_CONNECTIONS_PER_IP: number;
  MAX_REPORT_BYTES: number;
  ARCHIVE_MAX_BYTES: number;
  MAX_DECOMPRESSED_BYTES: number;
  INTAKE_PARSE_THREADS: number;
}
