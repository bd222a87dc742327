import type { Region } from "@dmarc-ledger/events";
import { intakeSettingsFromEnv } from "@dmarc-ledger/ingestion";

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
  /** Largest report upload (POST /api/reports), MAX_REPORT_BYTES. */
  maxReportBytes: number;
  /** Largest input the raw archive keeps whole, ARCHIVE_MAX_BYTES. */
  archiveMaxBytes: number;
  /** What one upload may decompress to, MAX_DECOMPRESSED_BYTES. */
  maxDecompressedBytes: number;
}

export function apiConfigFromEnv(env: NodeJS.ProcessEnv, port: number): ApiConfig {
  const region = env.DMARC_LEDGER_REGION === "eu" ? "eu" : "global";
  const intake = intakeSettingsFromEnv(env);
  return {
    region,
    publicBaseUrl: withApiRoot(env.PUBLIC_BASE_URL ?? `http://localhost:${port}/api/`),
    otherRegionBaseUrl: env.OTHER_REGION_BASE_URL ? withApiRoot(env.OTHER_REGION_BASE_URL) : null,
    rateLimit: {
      perSecond: positiveNumber(env.RATE_LIMIT_PER_SECOND, 20),
      burst: positiveNumber(env.RATE_LIMIT_BURST, 100),
    },
    readYourWritesTimeoutMs: positiveNumber(env.READ_YOUR_WRITES_TIMEOUT_MS, 5000),
    maxBodyBytes: positiveNumber(env.MAX_BODY_BYTES, 64 * 1024),
    maxReportBytes: intake.maxReportBytes,
    archiveMaxBytes: intake.archiveMaxBytes,
    maxDecompressedBytes: intake.maxDecompressedBytes,
  };
}

function withApiRoot(url: string): string {
  const trimmed = url.replace(/\/+$/, "");
  return trimmed.endsWith("/api") ? `${trimmed}/` : `${trimmed}/api/`;
}

function positiveNumber(value: string | undefined, fallback: number): number {
  const parsed = Number(value);
  return value !== undefined && Number.isFinite(parsed) && parsed > 0 ? parsed : fallback;
}
