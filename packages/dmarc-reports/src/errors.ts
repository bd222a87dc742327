export type ReportParseErrorCode =
  | "empty_input"
  | "not_a_report"
  | "malformed_xml"
  | "incomplete_report"
  | "decompressed_too_large"
  | "compression_ratio_exceeded"
  | "zip_unexpected_entries"
  | "corrupt_archive"
  | "no_report_in_mail"
  | "nesting_too_deep"
  | "field_too_long"
  | "xml_node_too_long"
  | "invalid_domain"
  | "invalid_date_range"
  | "count_out_of_range"
  | "too_many_results"
  | "mail_too_large"
  | "no_valid_rows"
  | "unexpanded_entity"
  | "invalid_organization"
  // SMTP TLS reports (packages/tls-reports' TlsReportErrorCode).
  | "malformed_json"
  | "json_too_large"
  | "invalid_tls_report"
  | "too_many_entries";

/** Raised when an input cannot be turned into any report; `code` says why, for callers and logs. */
export class ReportParseError extends Error {
  readonly code: ReportParseErrorCode;

  constructor(code: ReportParseErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ReportParseError";
    this.code = code;
  }
}
