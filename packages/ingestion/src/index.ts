export {
  bytesInput,
  fileInput,
  type IngestedItem,
  type IngestOptions,
  type IngestOutcome,
  type InputBytes,
  ingest,
  rowsPerChunk,
} from "./ingest.js";
