import { oneOf } from "@dmarc-ledger/config";

export const logLevels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** What every process reads to log: compose it into the process's settings shape. */
export const loggingSettings = {
  LOG_LEVEL: oneOf(logLevels, "info"),
  /** JSON lines on stdout unless a person asks for the pretty, coloured form. */
  LOG_FORMAT: oneOf(["json", "pretty"] as const, "json"),
};

export interface LoggingSettings {
  LOG_LEVEL: (typeof logLevels)[number];
  LOG_FORMAT: "json" | "pretty";
}
