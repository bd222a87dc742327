import { ConfigError, parseSettings } from "@dmarc-ledger/config";
import { z } from "zod";

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A duration written with its unit ("300ms", "90s", "5m", "1h"): a bare number would leave the
 * reader guessing between seconds (DNS's unit) and milliseconds (our other *_MS settings).
 */
export function duration(options: { minMs: number; maxMs: number; defaultMs: number }) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return options.defaultMs;
      const match = /^(\d+)(ms|s|m|h)$/.exec(value.trim());
      const ms = match ? Number(match[1]) * units[match[2]!]! : Number.NaN;
      if (!Number.isSafeInteger(ms) || ms < options.minMs || ms > options.maxMs) {
        ctx.addIssue({
          code: "custom",
          message: `"${value}" is not a duration from ${options.minMs / 1000}s to ${options.maxMs / 3_600_000}h, written with its unit (ms, s, m or h: "300s", "5m")`,
        });
        return z.NEVER;
      }
      return ms;
    });
}

export const safeSpfRefreshSettingsShape = {
  /** A record is never recomputed sooner than this after its last computation, whatever the TTLs. */
  SAFE_SPF_MIN_REFRESH: duration({ minMs: 1000, maxMs: 24 * 3_600_000, defaultMs: 5 * 60_000 }),
  /** …nor later than this, however long the TTLs: also the longest backoff after failures. */
  SAFE_SPF_MAX_REFRESH: duration({ minMs: 1000, maxMs: 7 * 24 * 3_600_000, defaultMs: 3_600_000 }),
};

export interface SafeSpfRefreshSettings {
  minRefreshMs: number;
  maxRefreshMs: number;
}

/** The refresher's settings from the environment; ConfigError names each wrong variable. */
export function safeSpfRefreshSettingsFromEnv(env: NodeJS.ProcessEnv): SafeSpfRefreshSettings {
  const parsed = parseSettings(safeSpfRefreshSettingsShape, env);
  if (parsed.SAFE_SPF_MIN_REFRESH > parsed.SAFE_SPF_MAX_REFRESH) {
    throw new ConfigError([
      {
        variable: "SAFE_SPF_MIN_REFRESH",
        message: `must not be longer than SAFE_SPF_MAX_REFRESH (${env.SAFE_SPF_MAX_REFRESH ?? "1h"})`,
      },
    ]);
  }
  return { minRefreshMs: parsed.SAFE_SPF_MIN_REFRESH, maxRefreshMs: parsed.SAFE_SPF_MAX_REFRESH };
}
