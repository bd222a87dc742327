import { availableParallelism } from "node:os";
import { integer, parseSettings } from "@dmarc-ledger/config";

const mebibyte = 1024 * 1024;

/** Parse worker threads: one per core beside the event loop's, at least one. */
export const defaultParseThreads = Math.max(1, availableParallelism() - 1);

/** The intake's environment variables, validated at start (compose into a process's settings). */
export const intakeSettingsShape = {
  /** Largest report body POST /api/reports accepts (413 above). */
  MAX_REPORT_BYTES: integer({ min: 1024, max: 1024 * mebibyte, default: 50 * mebibyte }),
  /** Largest input the raw archive keeps whole; above it only its hash, size and outcome. */
  ARCHIVE_MAX_BYTES: integer({ min: 1024, max: 4096 * mebibyte, default: 256 * mebibyte }),
  /** Ceiling on what any decompression layer (or a buffered mail) of one input may produce. */
  MAX_DECOMPRESSED_BYTES: integer({ min: 1024, max: 4096 * mebibyte, default: 200 * mebibyte }),
  /** Worker threads that parse, hash and compress inputs; 0 does it on the event loop. */
  INTAKE_PARSE_THREADS: integer({ min: 0, max: 64, default: defaultParseThreads }),
};

export interface IntakeSettings {
  maxReportBytes: number;
  archiveMaxBytes: number;
  maxDecompressedBytes: number;
  parseThreads: number;
}

export function intakeSettingsFromEnv(env: NodeJS.ProcessEnv): IntakeSettings {
  const parsed = parseSettings(intakeSettingsShape, env);
  return {
    maxReportBytes: parsed.MAX_REPORT_BYTES,
    archiveMaxBytes: parsed.ARCHIVE_MAX_BYTES,
    maxDecompressedBytes: parsed.MAX_DECOMPRESSED_BYTES,
    parseThreads: parsed.INTAKE_PARSE_THREADS,
  };
}

/** The receiveInput settings of a channel that has these settings and the runtime's store and db. */
export function intakeLimits(settings: IntakeSettings): {
  archiveMaxBytes: number;
  parseOptions: { maxDecompressedBytes: number };
  parseThreads: number;
} {
  return {
    archiveMaxBytes: settings.archiveMaxBytes,
    parseThreads: settings.parseThreads,
    parseOptions: { maxDecompressedBytes: settings.maxDecompressedBytes },
  };
}
