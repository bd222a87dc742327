export { type ArchivedInput, statusOf } from "./archive.js";
export { droppedRowsOf } from "./dropped-rows.js";
export { type IngestedItem, type IngestOptions, type IngestOutcome, ingest, rowsPerChunk } from "./ingest.js";
export { bytesInput, fileInput, type InputBytes } from "./input-bytes.js";
export { fileLooksLikeMbox, looksLikeMbox, type MboxMessage, splitMbox } from "./mbox.js";
export { intakeMigrations } from "./migrations/index.js";
export { startParseWorkers } from "./parse-pool.js";
export { hereLimits } from "./prepare-here.js";
export { purgeOwnerInputs, purgeUnclaimedInputs } from "./purge-inputs.js";
export {
  defaultArchiveMaxBytes,
  type IntakeDeps,
  type ReceivedInput,
  type ReceiveOptions,
  receiveInput,
} from "./receive-input.js";
export { type ReprocessedInput, reprocessArchived, reprocessInput } from "./reprocess.js";
export type { ArchiveStatus, IntakeSchema, RawInputTable } from "./schema.js";
export {
  defaultParseThreads,
  type IntakeSettings,
  intakeLimits,
  intakeSettingsFromEnv,
  intakeSettingsShape,
} from "./settings.js";
export { compressedInput, InputTooLargeError, type SpooledInput, spool } from "./spool.js";
export { type InputOwner, isTenantInput, listTenantInputs, type TenantInput } from "./tenant-inputs.js";
