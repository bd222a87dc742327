export {
  addressKey,
  type ConnectionLimiter,
  type ConnectionLimits,
  limitConnections,
  limitHttpConnections,
} from "./connection-limits.js";
export { connectionLost } from "./connection-lost.js";
export { createLogger, redactedPaths } from "./create-logger.js";
export {
  exitOnStartFailure,
  type StopDeadline,
  type StopFunction,
  StopTimeoutError,
  stopOnSignal,
  stopWithin,
} from "./lifecycle.js";
export {
  type MetricsSettings,
  metricsSettings,
  processMetrics,
  type RunningMetricsServer,
  serveProcessMetrics,
  startMetricsServer,
} from "./metrics-server.js";
export { startedByPackageManager, whenParentExits } from "./parent-watch.js";
export { processIsRunning } from "./process-running.js";
export { type LoggingSettings, loggingSettings, logLevels, stopSettings } from "./settings.js";
export { type StopProgress, stopProgress, unwatchedStop } from "./stop-progress.js";
