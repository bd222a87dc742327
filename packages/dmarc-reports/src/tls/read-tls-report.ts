import { parseTlsReport, TlsReportError, tlsLimits } from "@dmarc-ledger/tls-reports";
import { ReportParseError } from "../errors.js";
import { type ByteSource, readAll } from "../io/byte-source.js";
import type { ReportItem } from "../types.js";

/**
 * One SMTP TLS report (RFC 8460 §4: a JSON object), read whole up to tlsLimits.maxJsonBytes:
 * real ones are a few KiB. Its refusals carry the same codes as the rest of the parser's.
 */
export async function readTlsReport(source: ByteSource, where: string, notes: string[]): Promise<ReportItem> {
  const bytes = await readAll(source, tlsLimits.maxJsonBytes, `${where} (JSON)`, "json_too_large");
  try {
    const report = parseTlsReport(bytes);
    return { kind: "tls", report: { ...report, warnings: [...notes, ...report.warnings] } };
  } catch (error) {
    if (error instanceof TlsReportError) {
      throw new ReportParseError(error.code, `${where}: ${error.message}`, { cause: error });
    }
    throw error;
  }
}
