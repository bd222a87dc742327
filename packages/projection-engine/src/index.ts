export {
  type CheckpointedWorkerOptions,
  type RunningWorker,
  startCheckpointedWorker,
} from "./checkpointed-worker.js";
export { type LeasedJobOptions, type RunningLeasedJob, runLeasedJob } from "./leased-job.js";
export {
  type LeasedProjectorOptions,
  processOwnerId,
  type RunningLeasedProjector,
  startLeasedProjector,
} from "./leased-projector.js";
export {
  fenceLeases,
  type HeldLease,
  LeaseLostError,
  liveLeases,
  releaseLease,
  renewLease,
  tryAcquireLease,
} from "./leases.js";
export { projectionEngineMigrations } from "./migrations/index.js";
export type { Projection } from "./projection.js";
export {
  applyBatch,
  applyBatchWithin,
  catchUp,
  catchUpSideBySide,
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
export type {
  ProjectionCheckpointSchema,
  ProjectionCheckpointTable,
  ProjectionLeaseTable,
} from "./schema.js";
