export { TlsReportError, type TlsReportErrorCode } from "./errors.js";
export { tlsLimits } from "./limits.js";
export { identityOf, parseTlsReport } from "./parse-tls-report.js";
export {
  rfc8460PolicyTypes,
  rfc8460ResultTypes,
  type TlsFailureDetail,
  type TlsPolicyResult,
  type TlsReport,
} from "./types.js";
