import type { ParseOptions } from "./types.js";

export interface Limits {
  maxDecompressedBytes: number;
  maxCompressionRatio: number;
  rowBatch: number;
}

export const DEFAULT_MAX_DECOMPRESSED_BYTES = 200 * 1024 * 1024;
// Real reports compress 10–40×; deflate bombs reach ~1000×.
export const DEFAULT_MAX_COMPRESSION_RATIO = 250;
export const DEFAULT_ROW_BATCH = 1000;
/** Below this output a layer's ratio is not judged: tiny reports can have silly ratios. */
export const RATIO_GRACE_BYTES = 1024 * 1024;

export function resolveLimits(options: ParseOptions = {}): Limits {
  return {
    maxDecompressedBytes: options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES,
    maxCompressionRatio: options.maxCompressionRatio ?? DEFAULT_MAX_COMPRESSION_RATIO,
    rowBatch: Math.max(1, options.rowBatch ?? DEFAULT_ROW_BATCH),
  };
}
