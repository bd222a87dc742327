export { createLogger, redactedPaths } from "./create-logger.js";
export { exitOnStartFailure, stopOnSignal } from "./lifecycle.js";
export { type LoggingSettings, loggingSettings, logLevels } from "./settings.js";
