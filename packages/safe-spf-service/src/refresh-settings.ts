import { ConfigError, duration, parseSettings } from "@dmarc-ledger/config";

export { duration };

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
