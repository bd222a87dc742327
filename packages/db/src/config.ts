import { parseSettings } from "@dmarc-ledger/config";
import { databaseConfigFrom, databaseSettings } from "./settings.js";

/** Where the database lives: a PostgreSQL server, or an embedded PGlite data directory. */
export type DatabaseConfig =
  | { kind: "postgres"; url: string }
  | { kind: "pglite"; dataDir: string }
  /** PGlite in memory: tests and one-shot tools only; nothing survives the process. */
  | { kind: "pglite-memory" };

/**
 * The embedded default unless DATABASE_URL is set: PGlite in DMARC_LEDGER_DATA_DIR (./data).
 * Throws ConfigError when DATABASE_URL is not a PostgreSQL URL.
 */
export function databaseConfigFromEnv(env: NodeJS.ProcessEnv = process.env): DatabaseConfig {
  return databaseConfigFrom(parseSettings(databaseSettings, env));
}

export function describeDatabase(config: DatabaseConfig): string {
  switch (config.kind) {
    case "postgres":
      return `PostgreSQL ${redactPassword(config.url)}`;
    case "pglite":
      return `embedded PGlite in ${config.dataDir}`;
    case "pglite-memory":
      return "embedded PGlite in memory";
  }
}

/** The URL with its password, if any, replaced by *** (for messages and logs). */
export function redactPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparseable DATABASE_URL)";
  }
}
