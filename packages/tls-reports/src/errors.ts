export type TlsReportErrorCode =
  | "malformed_json"
  | "json_too_large"
  | "nesting_too_deep"
  | "invalid_tls_report"
  | "too_many_entries"
  | "field_too_long"
  | "count_out_of_range"
  | "invalid_date_range";

/** A JSON input that is not a TLS report we can store; `code` says why. */
export class TlsReportError extends Error {
  readonly code: TlsReportErrorCode;

  constructor(code: TlsReportErrorCode, message: string) {
    super(message);
    this.name = "TlsReportError";
    this.code = code;
  }
}
