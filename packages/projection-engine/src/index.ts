export {
  type CheckpointedWorkerOptions,
  type RunningWorker,
  startCheckpointedWorker,
} from "./checkpointed-worker.js";
export { projectionEngineMigrations } from "./migrations/index.js";
export type { Projection } from "./projection.js";
export {
  applyBatch,
  applyBatchWithin,
  catchUp,
  lowestCheckpoint,
  type ProjectorOptions,
  projectionsReached,
  type RunningProjector,
  resetProjections,
  startProjector,
  waitForProjections,
} from "./projection-engine.js";
export { type ProjectionLag, projectionLags } from "./projection-lags.js";
export { readModelVersion } from "./read-model-version.js";
export { type RebuildOptions, rebuildBeside } from "./rebuild-beside.js";
export type { ProjectionCheckpointSchema, ProjectionCheckpointTable } from "./schema.js";
