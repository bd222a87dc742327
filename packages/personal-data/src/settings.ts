import { ConfigError, parseSettings } from "@dmarc-ledger/config";
import { z } from "zod";

/** 32 bytes, as base64 (`openssl rand -base64 32`) or 64 hex digits. */
export function parseMasterKey(value: string): Buffer | null {
  const text = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, "hex");
  if (/^[A-Za-z0-9+/]{43}=?$/.test(text)) {
    const bytes = Buffer.from(text, "base64");
    if (bytes.length === 32) return bytes;
  }
  return null;
}

function masterKey() {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return null;
      const key = parseMasterKey(value);
      if (!key) {
        // The value is a secret: never echoed.
        ctx.addIssue({
          code: "custom",
          message: "is not 32 bytes as base64 or 64 hex digits (make one: openssl rand -base64 32)",
        });
        return z.NEVER;
      }
      return key;
    });
}

/**
 * The master key that wraps the data keys of personal data (docs/privacy.md). Required with
 * DATABASE_URL; the embedded default keeps a generated one in the data directory (master.key).
 * MASTER_KEY_PREVIOUS: the key before a rotation, read until `dmarc-ledger keys rotate` rewrapped
 * every data key under MASTER_KEY.
 */
export const personalDataSettings = {
  MASTER_KEY: masterKey(),
  MASTER_KEY_PREVIOUS: masterKey(),
};

/** The message of a missing MASTER_KEY under DATABASE_URL (masterKeysFrom says the same). */
export const masterKeyRequired =
  "is required with DATABASE_URL: the key that wraps the keys of personal data, 32 bytes as base64 (openssl rand -base64 32); keep it apart from the database's backups";

/**
 * MASTER_KEY and MASTER_KEY_PREVIOUS checked with a process's other settings, so that every wrong
 * variable is named at once: malformed, or missing with DATABASE_URL. Whether it is the key that
 * wrapped the stored keys is checked once the database is open (openDataKeys).
 */
export function personalDataSettingsFromEnv(env: NodeJS.ProcessEnv) {
  const settings = parseSettings(personalDataSettings, env);
  if (!settings.MASTER_KEY && env.DATABASE_URL) {
    throw new ConfigError([{ variable: "MASTER_KEY", message: masterKeyRequired }]);
  }
  return settings;
}
