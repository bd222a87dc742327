import { createHmac, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, parseSettings } from "@dmarc-ledger/config";
import { masterKeyRequired, parseMasterKey, personalDataSettings } from "./settings.js";

/** The master key that wraps new data keys, and the one before a rotation (still read). */
export interface MasterKeys {
  current: Buffer;
  previous: Buffer | null;
}

/** Names a master key without giving anything of it away: stored beside each key it wrapped. */
export function masterKeyId(key: Uint8Array): string {
  return createHmac("sha256", key).update("dmarc-ledger master key id").digest("hex").slice(0, 16);
}

/** The file the embedded default keeps its generated master key in, inside the data directory. */
export const masterKeyFile = "master.key";

/**
 * MASTER_KEY (and MASTER_KEY_PREVIOUS) from the environment. Without MASTER_KEY: with a data
 * directory (embedded PGlite) the key in its master.key, made on first start readable by the owner
 * only; with DATABASE_URL a ConfigError naming MASTER_KEY, since a key generated on one machine
 * would leave the others unable to read what it sealed.
 */
export function masterKeysFrom(env: NodeJS.ProcessEnv, dataDir: string | null): MasterKeys {
  const settings = parseSettings(personalDataSettings, env);
  if (settings.MASTER_KEY) return { current: settings.MASTER_KEY, previous: settings.MASTER_KEY_PREVIOUS };
  if (dataDir === null) {
    throw new ConfigError([{ variable: "MASTER_KEY", message: masterKeyRequired }]);
  }
  return { current: embeddedMasterKey(dataDir), previous: settings.MASTER_KEY_PREVIOUS };
}

function embeddedMasterKey(dataDir: string): Buffer {
  const path = join(dataDir, masterKeyFile);
  mkdirSync(dataDir, { recursive: true });
  try {
    // "wx": of two processes starting at once, one writes it and the other reads it.
    writeFileSync(path, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const key = parseMasterKey(readFileSync(path, "utf8"));
  if (!key) {
    throw new ConfigError([
      {
        variable: "MASTER_KEY",
        message: `unset, and ${path} does not hold 32 bytes as base64 or 64 hex digits`,
      },
    ]);
  }
  return key;
}
