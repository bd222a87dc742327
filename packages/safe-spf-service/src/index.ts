export { type ComputeOutcome, computeSafeSpf } from "./compute-safe-spf.js";
export { resolverFromEnv } from "./resolver-from-env.js";
export {
  type RunningSafeSpfWorker,
  type SafeSpfWorkerOptions,
  startSafeSpfWorker,
} from "./safe-spf-worker.js";
export { submitOriginalSpf } from "./submit-original.js";
