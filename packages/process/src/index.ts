export {
  addressKey,
  type ConnectionLimiter,
  type ConnectionLimits,
  limitConnections,
  limitHttpConnections,
} from "./connection-limits.js";
export { createLogger, redactedPaths } from "./create-logger.js";
export { exitOnStartFailure, stopOnSignal } from "./lifecycle.js";
export {
  type MetricsSettings,
  metricsSettings,
  type RunningMetricsServer,
  serveProcessMetrics,
  startMetricsServer,
} from "./metrics-server.js";
export { startedByPackageManager, whenParentExits } from "./parent-watch.js";
export { type LoggingSettings, loggingSettings, logLevels } from "./settings.js";
