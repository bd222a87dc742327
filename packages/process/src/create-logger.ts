import { createRequire } from "node:module";
import { type DestinationStream, type Logger, pino } from "pino";
import type PinoPretty from "pino-pretty";
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
    // Loaded only when asked for (it is not small), synchronously and in this thread: a transport
    // worker would lose the last lines on exit.
    const pretty = createRequire(import.meta.url)("pino-pretty") as typeof PinoPretty;
    return pino(options, pretty({ sync: true, destination: destination ?? 1 }));
  }
  // Written synchronously: pino's default stdout stream writes in the background, and the lines
  // in flight when process.exit runs come out after later ones or not at all ("stopped", or
  // why start-up failed). A log line per request costs one write(2), which is fine here.
  return pino(options, destination ?? pino.destination({ dest: 1, sync: true }));
}
