import { integer, oneOf } from "@dmarc-ledger/config";

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

/** How long a process may take to stop on SIGTERM: compose it into the process's settings shape. */
export const stopSettings = {
  /**
   * From the signal to the exit. Requests in flight and the batch being applied get most of it;
   * near its end the database statements still running are cancelled; at its end the process
   * exits 1, whatever is left.
   */
  STOP_TIMEOUT_MS: integer({ min: 1_000, max: 600_000, default: 10_000 }),
};
