import type { ParseOptions } from "./types.js";

export interface Limits {
  maxDecompressedBytes: number;
  maxCompressionRatio: number;
  maxMailBytes: number;
  rowBatch: number;
}

export const DEFAULT_MAX_DECOMPRESSED_BYTES = 200 * 1024 * 1024;
// Real reports compress 10–40×; deflate bombs reach ~1000×.
export const DEFAULT_MAX_COMPRESSION_RATIO = 250;
/**
 * Mails are parsed whole (postal-mime), at about eight times their size in memory: 32 MiB keeps
 * the parse of a mail at the limit within the process budget of 512 MB with room to spare. Report mails carry compressed reports and
 * are rarely over a few MiB; a mail over the limit is refused and kept.
 */
export const DEFAULT_MAX_MAIL_BYTES = 32 * 1024 * 1024;
export const DEFAULT_ROW_BATCH = 1000;
/** Below this output a layer's ratio is not judged: tiny reports can have silly ratios. */
export const RATIO_GRACE_BYTES = 1024 * 1024;

/**
 * Characters one text field may hold (names, domains, ids, results, comments). A longer field
 * refuses the report: no real reporter writes one, and it would be buffered and stored whole.
 */
export const MAX_FIELD_CHARS = 1024;
/**
 * Characters the XML parser may buffer for one node before it completes: a text node, comment,
 * CDATA section, attribute, DTD or processing instruction. Checked after every 64 KiB the
 * parser is given, so a node is buffered up to this plus 64 KiB; past it the input is refused.
 */
export const MAX_XML_NODE_CHARS = 1024 * 1024;
/**
 * Messages one report may count, in one row and in all. Far below 2^53, so that sums of many
 * reports stay exact in JavaScript numbers; far above any real receiver's day.
 */
export const MAX_REPORT_MESSAGES = 1_000_000_000_000;
/** Reasons and DKIM and SPF results one row may hold, together (real rows hold a few). */
export const MAX_RESULTS_PER_ROW = 64;
/** A report's date range: at most this long (real ones cover a day, some a week). */
export const MAX_DATE_RANGE_SECONDS = 31 * 86_400;
/** Latest time a report may name: 9999-12-31T23:59:59Z. */
export const MAX_TIMESTAMP = 253_402_300_799;
/** A failure report's Subject and sample headers are kept up to these sizes, then cut (with a warning). */
export const MAX_SUBJECT_CHARS = 1024;
export const MAX_SAMPLE_HEADER_CHARS = 64 * 1024;

export function resolveLimits(options: ParseOptions = {}): Limits {
  return {
    maxDecompressedBytes: options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES,
    maxCompressionRatio: options.maxCompressionRatio ?? DEFAULT_MAX_COMPRESSION_RATIO,
    maxMailBytes: options.maxMailBytes ?? DEFAULT_MAX_MAIL_BYTES,
    rowBatch: Math.max(1, options.rowBatch ?? DEFAULT_ROW_BATCH),
  };
}
