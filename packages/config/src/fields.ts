import { z } from "zod";

/** Field builders for environment variables: each message says what is allowed. */

export function integer(options: { min: number; max: number; default: number }) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return options.default;
      const parsed = /^-?\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
      if (!Number.isSafeInteger(parsed) || parsed < options.min || parsed > options.max) {
        ctx.addIssue({
          code: "custom",
          message: `"${value}" is not an integer from ${options.min} to ${options.max}`,
        });
        return z.NEVER;
      }
      return parsed;
    });
}

/** A TCP/UDP port; 0 asks the system for a free one. */
export function port(defaultPort: number) {
  return integer({ min: 0, max: 65535, default: defaultPort });
}

/** A port that turns something on: unset (or empty) is null, off. 0 asks for a free one. */
export function optionalPort() {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value.trim() === "") return null;
      const parsed = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
      if (!Number.isSafeInteger(parsed) || parsed > 65535) {
        ctx.addIssue({ code: "custom", message: `"${value}" is not a port from 0 to 65535` });
        return z.NEVER;
      }
      return parsed;
    });
}

export function oneOf<const Values extends readonly [string, ...string[]]>(
  values: Values,
  defaultValue: Values[number],
) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return defaultValue;
      if (!(values as readonly string[]).includes(value)) {
        ctx.addIssue({ code: "custom", message: `"${value}" is not one of ${values.join(", ")}` });
        return z.NEVER;
      }
      return value as Values[number];
    });
}

export function url(protocols: readonly string[]) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return undefined;
      let parsed: URL;
      try {
        parsed = new URL(value);
      } catch {
        ctx.addIssue({ code: "custom", message: "is not a URL" });
        return z.NEVER;
      }
      if (!protocols.includes(parsed.protocol.replace(/:$/, ""))) {
        ctx.addIssue({
          code: "custom",
          message: `must start with ${protocols.map((p) => `${p}://`).join(" or ")}`,
        });
        return z.NEVER;
      }
      return value;
    });
}

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A length of time in words a reader can check: "5m" rather than 300000 (or 300?). */
function spoken(ms: number): string {
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * A duration written with its unit ("300ms", "90s", "5m", "1h", "7d"): a bare number would leave
 * the reader guessing between seconds (DNS's unit) and milliseconds (our other *_MS settings).
 */
export function duration(options: { minMs: number; maxMs: number; defaultMs: number }) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return options.defaultMs;
      const match = /^(\d+)(ms|s|m|h|d)$/.exec(value.trim());
      const ms = match ? Number(match[1]) * units[match[2]!]! : Number.NaN;
      if (!Number.isSafeInteger(ms) || ms < options.minMs || ms > options.maxMs) {
        ctx.addIssue({
          code: "custom",
          message: `"${value}" is not a duration from ${spoken(options.minMs)} to ${spoken(options.maxMs)}, written with its unit (ms, s, m, h or d: "300s", "5m")`,
        });
        return z.NEVER;
      }
      return ms;
    });
}
