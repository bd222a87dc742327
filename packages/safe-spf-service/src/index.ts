export { type ComputeOutcome, computeSafeSpf } from "./compute-safe-spf.js";
export { resolverFrom, resolverFromEnv } from "./resolver-from-env.js";
export {
  type RunningSafeSpfWorker,
  type SafeSpfWorkerOptions,
  startSafeSpfWorker,
} from "./safe-spf-worker.js";
export { type SafeSpfSettings, safeSpfSettings } from "./settings.js";
export { submitOriginalSpf } from "./submit-original.js";
