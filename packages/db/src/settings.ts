import { integer, url } from "@dmarc-ledger/config";
import { z } from "zod";
import type { DatabaseConfig } from "./config.js";

/** Where a process keeps its data: compose into the process's settings shape. */
export const databaseSettings = {
  DATABASE_URL: url(["postgres", "postgresql"]),
  DMARC_LEDGER_DATA_DIR: z.string().optional(),
  /**
   * PostgreSQL only: how long one statement of a running service may take (0: no limit). A
   * request's query past it fails with 503; a background query fails and is retried later.
   */
  DATABASE_STATEMENT_TIMEOUT_MS: integer({ min: 0, max: 86_400_000, default: 60_000 }),
};

export interface DatabaseSettings {
  DATABASE_URL: string | undefined;
  DMARC_LEDGER_DATA_DIR?: string | undefined;
  DATABASE_STATEMENT_TIMEOUT_MS?: number;
}

/** The embedded default unless DATABASE_URL is set: PGlite in DMARC_LEDGER_DATA_DIR (./data). */
export function databaseConfigFrom(settings: DatabaseSettings): DatabaseConfig {
  if (settings.DATABASE_URL) return { kind: "postgres", url: settings.DATABASE_URL };
  return { kind: "pglite", dataDir: settings.DMARC_LEDGER_DATA_DIR ?? "./data" };
}
