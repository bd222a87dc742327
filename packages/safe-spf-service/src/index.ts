export { type ComputeOutcome, computeSafeSpf } from "./compute-safe-spf.js";
export { type RefreshOutcome, refreshSafeSpf } from "./refresh-safe-spf.js";
export { backoffMs, refreshDelayMs } from "./refresh-schedule.js";
export { resolverFrom, resolverFromEnv } from "./resolver-from-env.js";
export {
  type RunningSafeSpfRefresher,
  type SafeSpfRefresherOptions,
  startSafeSpfRefresher,
} from "./safe-spf-refresher.js";
export {
  type RunningSafeSpfWorker,
  type SafeSpfWorkerOptions,
  startSafeSpfWorker,
} from "./safe-spf-worker.js";
export {
  duration,
  type SafeSpfRefreshSettings,
  type SafeSpfSettings,
  safeSpfRefreshSettingsFromEnv,
  safeSpfRefreshSettingsShape,
  safeSpfSettings,
} from "./settings.js";
export { submitOriginalSpf } from "./submit-original.js";
