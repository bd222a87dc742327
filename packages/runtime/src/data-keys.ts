import { randomBytes } from "node:crypto";
import { type DataKeys, openDataKeys } from "@dmarc-ledger/personal-data";
import type { Runtime } from "./open-runtime.js";

/**
 * The data keys of personal data for a process on this runtime (docs/privacy.md): MASTER_KEY, or
 * in the embedded layout the key kept in the data directory, checked against the stored keys.
 */
export function runtimeDataKeys(runtime: Runtime, env: NodeJS.ProcessEnv = process.env): Promise<DataKeys> {
  const config = runtime.database.config;
  // A database in memory ends with the process, and so may its master key.
  const withKey =
    config.kind === "pglite-memory" && !env.MASTER_KEY
      ? { ...env, MASTER_KEY: randomBytes(32).toString("base64") }
      : env;
  return openDataKeys(runtime.db, withKey, config.kind === "pglite" ? config.dataDir : null);
}
