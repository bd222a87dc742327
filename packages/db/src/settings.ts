import { url } from "@dmarc-ledger/config";
import { z } from "zod";
import type { DatabaseConfig } from "./config.js";

/** Where a process keeps its data: compose into the process's settings shape. */
export const databaseSettings = {
  DATABASE_URL: url(["postgres", "postgresql"]),
  DMARC_LEDGER_DATA_DIR: z.string().optional(),
};

export interface DatabaseSettings {
  DATABASE_URL: string | undefined;
  DMARC_LEDGER_DATA_DIR?: string | undefined;
}

/** The embedded default unless DATABASE_URL is set: PGlite in DMARC_LEDGER_DATA_DIR (./data). */
export function databaseConfigFrom(settings: DatabaseSettings): DatabaseConfig {
  if (settings.DATABASE_URL) return { kind: "postgres", url: settings.DATABASE_URL };
  return { kind: "pglite", dataDir: settings.DMARC_LEDGER_DATA_DIR ?? "./data" };
}
