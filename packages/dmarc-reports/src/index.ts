export { ReportParseError, type ReportParseErrorCode } from "./errors.js";
export {
  DEFAULT_MAX_COMPRESSION_RATIO,
  DEFAULT_MAX_DECOMPRESSED_BYTES,
  DEFAULT_MAX_MAIL_BYTES,
  MAX_DATE_RANGE_SECONDS,
  MAX_FIELD_CHARS,
  MAX_REPORT_MESSAGES,
  MAX_RESULTS_PER_ROW,
  MAX_SAMPLE_HEADER_CHARS,
  MAX_SUBJECT_CHARS,
  MAX_TIMESTAMP,
  MAX_XML_NODE_CHARS,
} from "./options.js";
export { parseReports } from "./parse-reports.js";
export { readReports } from "./read-reports.js";
export { spreadOverDays } from "./spread-over-days.js";
export type {
  AggregateHeader,
  AggregateReport,
  AggregateRow,
  DkimAuthResult,
  DroppedRowReason,
  DroppedRows,
  FailureReport,
  ParsedReport,
  ParseOptions,
  PolicyOverrideReason,
  PolicyPublished,
  ReportItem,
  SpfAuthResult,
} from "./types.js";
