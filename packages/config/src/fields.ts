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
