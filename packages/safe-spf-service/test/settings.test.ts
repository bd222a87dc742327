import { ConfigError } from "@dmarc-ledger/config";
import { describe, expect, it } from "vitest";
import { backoffMs, refreshDelayMs } from "../src/refresh-schedule.js";
import { safeSpfRefreshSettingsFromEnv } from "../src/refresh-settings.js";

describe("Safe SPF refresh settings", () => {
  it("default to 5 minutes and 1 hour and read durations with their unit", () => {
    expect(safeSpfRefreshSettingsFromEnv({})).toEqual({ minRefreshMs: 300_000, maxRefreshMs: 3_600_000 });
    expect(
      safeSpfRefreshSettingsFromEnv({ SAFE_SPF_MIN_REFRESH: "90s", SAFE_SPF_MAX_REFRESH: "2h" }),
    ).toEqual({
      minRefreshMs: 90_000,
      maxRefreshMs: 7_200_000,
    });
    expect(
      safeSpfRefreshSettingsFromEnv({ SAFE_SPF_MIN_REFRESH: "1500ms", SAFE_SPF_MAX_REFRESH: "" }),
    ).toEqual({
      minRefreshMs: 1500,
      maxRefreshMs: 3_600_000,
    });
  });

  it("name each wrong variable: no unit, out of range, minimum above maximum", () => {
    const problems = (env: NodeJS.ProcessEnv) => {
      try {
        safeSpfRefreshSettingsFromEnv(env);
      } catch (error) {
        if (error instanceof ConfigError) return error.problems.map((p) => p.variable);
        throw error;
      }
      return [];
    };
    expect(problems({ SAFE_SPF_MIN_REFRESH: "300", SAFE_SPF_MAX_REFRESH: "0s" })).toEqual([
      "SAFE_SPF_MIN_REFRESH",
      "SAFE_SPF_MAX_REFRESH",
    ]);
    expect(problems({ SAFE_SPF_MIN_REFRESH: "2h", SAFE_SPF_MAX_REFRESH: "1h" })).toEqual([
      "SAFE_SPF_MIN_REFRESH",
    ]);
    expect(problems({ SAFE_SPF_MIN_REFRESH: "5 minutes" })).toEqual(["SAFE_SPF_MIN_REFRESH"]);
  });

  it("clamp the TTL to the bounds and double the backoff up to the longest refresh", () => {
    const settings = { minRefreshMs: 300_000, maxRefreshMs: 3_600_000 };
    expect(refreshDelayMs(60, settings)).toBe(300_000);
    expect(refreshDelayMs(900, settings)).toBe(900_000);
    expect(refreshDelayMs(86_400, settings)).toBe(3_600_000);
    expect(refreshDelayMs(null, settings)).toBe(3_600_000);
    expect([1, 2, 3, 4, 10].map((n) => backoffMs(n, 30_000, settings))).toEqual([
      30_000, 60_000, 120_000, 240_000, 3_600_000,
    ]);
  });
});
