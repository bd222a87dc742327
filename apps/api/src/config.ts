import { parseSettings } from "@dmarc-ledger/config";
import type { Region } from "@dmarc-ledger/events";
import { type ApiSettings, apiSettings } from "./settings.js";

export interface ApiConfig {
  region: Region;
  /** This region's API root as clients reach it, ending in /api/ (links are built from it). */
  publicBaseUrl: string;
  /** The other region's API root, named in 421 answers; null when unknown. */
  otherRegionBaseUrl: string | null;
  rateLimit: { perSecond: number; burst: number };
  /** How long a write waits for the projections to show it (read-your-writes). */
  readYourWritesTimeoutMs: number;
  /** Largest accepted request body. */
  maxBodyBytes: number;
  /** How many events a projection may be behind the store's head while /readyz says ready. */
  readyMaxLag: number;
  /** Largest report upload (POST /api/reports), MAX_REPORT_BYTES. */
  maxReportBytes: number;
  /** Largest input the raw archive keeps whole, ARCHIVE_MAX_BYTES. */
  archiveMaxBytes: number;
  /** What one upload may decompress to, MAX_DECOMPRESSED_BYTES. */
  maxDecompressedBytes: number;
  /** Parse worker threads for uploads, INTAKE_PARSE_THREADS. */
  parseThreads: number;
  /** Memory for kept list answers, API_ANSWER_CACHE_BYTES (0: off). */
  answerCacheBytes: number;
  /** Whether clients reach the service over https (PUBLIC_BASE_URL): session cookies are Secure. */
  secureCookies: boolean;
  /** The dashboard's address as people reach it (PUBLIC_BASE_URL without /api/): links point here. */
  dashboardUrl: string;
  /** Whether webhook endpoints may be on private, loopback and link-local addresses (WEBHOOK_ALLOW_PRIVATE_ADDRESSES). */
  allowPrivateWebhookAddresses: boolean;
  /** Endpoints per tenant and URL length (WEBHOOK_MAX_ENDPOINTS, WEBHOOK_MAX_URL_LENGTH). */
  webhookLimits: { maxEndpoints: number; maxUrlLength: number };
}

/** The API's configuration from validated settings; `port` is the one really listened on. */
export function apiConfigFrom(settings: ApiSettings, port: number): ApiConfig {
  const publicBaseUrl = withApiRoot(settings.PUBLIC_BASE_URL ?? `http://localhost:${port}/api/`);
  return {
    region: settings.DMARC_LEDGER_REGION,
    publicBaseUrl,
    otherRegionBaseUrl: settings.OTHER_REGION_BASE_URL ? withApiRoot(settings.OTHER_REGION_BASE_URL) : null,
    rateLimit: { perSecond: settings.RATE_LIMIT_PER_SECOND, burst: settings.RATE_LIMIT_BURST },
    readYourWritesTimeoutMs: settings.READ_YOUR_WRITES_TIMEOUT_MS,
    maxBodyBytes: settings.MAX_BODY_BYTES,
    readyMaxLag: settings.READY_MAX_LAG,
    maxReportBytes: settings.MAX_REPORT_BYTES,
    archiveMaxBytes: settings.ARCHIVE_MAX_BYTES,
    maxDecompressedBytes: settings.MAX_DECOMPRESSED_BYTES,
    parseThreads: settings.INTAKE_PARSE_THREADS,
    answerCacheBytes: settings.API_ANSWER_CACHE_BYTES,
    secureCookies: publicBaseUrl.startsWith("https:"),
    dashboardUrl: new URL("../", publicBaseUrl).toString(),
    allowPrivateWebhookAddresses: settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES === "yes",
    webhookLimits: {
      maxEndpoints: settings.WEBHOOK_MAX_ENDPOINTS,
      maxUrlLength: settings.WEBHOOK_MAX_URL_LENGTH,
    },
  };
}

/** apiConfigFrom on the environment; throws ConfigError naming each wrong variable. */
export function apiConfigFromEnv(env: NodeJS.ProcessEnv, port: number): ApiConfig {
  return apiConfigFrom(parseSettings(apiSettings, env), port);
}

/**
 * Where people reach the dashboard, from PUBLIC_BASE_URL (or PORT) as the API would: the CLI
 * prints set-password links with it.
 */
export function dashboardUrlFromEnv(env: NodeJS.ProcessEnv): string {
  const settings = parseSettings(apiSettings, env);
  return apiConfigFrom(settings, settings.PORT).dashboardUrl;
}

function withApiRoot(url: string): string {
  const trimmed = url.replace(/\/+$/, "");
  return trimmed.endsWith("/api") ? `${trimmed}/` : `${trimmed}/api/`;
}
