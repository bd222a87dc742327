export { type ComputeOutcome, computeSafeSpf } from "./compute-safe-spf.js";
export { safeSpfMigrations } from "./migrations/index.js";
export { type RefreshOutcome, refreshSafeSpf } from "./refresh-safe-spf.js";
export { backoffMs, refreshDelayMs } from "./refresh-schedule.js";
export { resolverFrom, resolverFromEnv } from "./resolver-from-env.js";
export {
  type RunningSafeSpfRefresher,
  type SafeSpfRefresherOptions,
  startSafeSpfRefresher,
} from "./safe-spf-refresher.js";
export {
  type SafeSpfFreshness,
  type SafeSpfState,
  safeSpfState,
  staleGraceMs,
} from "./safe-spf-state.js";
export { safeSpfProjections, safeSpfStateProjection } from "./safe-spf-state-projection.js";
export {
  type RunningSafeSpfWorker,
  type SafeSpfWorkerOptions,
  startSafeSpfWorker,
} from "./safe-spf-worker.js";
export type { SafeSpfAndDomainSchema, SafeSpfRefreshTable, SafeSpfSchema, SafeSpfTable } from "./schema.js";
export {
  duration,
  type SafeSpfRefreshSettings,
  type SafeSpfSettings,
  safeSpfRefreshSettingsFromEnv,
  safeSpfRefreshSettingsShape,
  safeSpfSettings,
} from "./settings.js";
export { submitOriginalSpf } from "./submit-original.js";
