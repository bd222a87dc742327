export { ReportParseError, type ReportParseErrorCode } from "./errors.js";
export { parseReports } from "./parse-reports.js";
export { readReports } from "./read-reports.js";
export { spreadOverDays } from "./spread-over-days.js";
export type {
  AggregateHeader,
  AggregateReport,
  AggregateRow,
  DkimAuthResult,
  FailureReport,
  ParsedReport,
  ParseOptions,
  PolicyOverrideReason,
  PolicyPublished,
  ReportItem,
  SpfAuthResult,
} from "./types.js";
