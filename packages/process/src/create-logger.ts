import { type DestinationStream, type Logger, pino } from "pino";
import pretty from "pino-pretty";
import type { LoggingSettings } from "./settings.js";

/**
 * Paths of a log object that may hold secrets: API keys travel in the Authorization header, and
 * a logged error or request may carry either. Their values are replaced, never printed.
 */
export const redactedPaths = [
  "req.headers.authorization",
  "req.headers.cookie",
  "headers.authorization",
  "authorization",
  "apiKey",
  "*.apiKey",
  "password",
  "*.password",
];

/**
 * The process's logger: JSON lines on stdout (one per event, machine-readable), or pino-pretty's
 * human form on stdout when LOG_FORMAT=pretty. `destination` replaces stdout in tests.
 */
export function createLogger(
  settings: LoggingSettings,
  name: string,
  destination?: DestinationStream,
): Logger {
  const options = {
    name,
    level: settings.LOG_LEVEL,
    redact: { paths: redactedPaths, censor: "[redacted]" },
  };
  if (settings.LOG_FORMAT === "pretty") {
    // Synchronous, in this thread: a transport worker would lose the last lines on exit.
    return pino(options, pretty({ sync: true, destination: destination ?? 1 }));
  }
  return destination ? pino(options, destination) : pino(options);
}
