import type { IngestOutcome } from "@dmarc-ledger/intake";

/** Where a message goes once its reports are stored. */
export type MessageDisposition = "processed" | "invalid" | "not_report";

/**
 * Parser codes that mean "there was nothing report-like in this mail", as opposed to a report we
 * could not read. `no_report_in_mail`: no attachment carries XML, gzip or zip, there is no
 * feedback-report part and the body is no plain-text failure report. `not_a_report`: the input
 * (or the one part that was looked at) is HTML, XML without <feedback> (an e-invoice, say), an
 * empty zip, or none of the formats. `zip_unexpected_entries`: a zip of several files, which no
 * reporter sends (RFC 7489 section 7.2.1.1: one report file) but every office document (.docx,
 * .xlsx, .odt) is. Every other code (malformed_xml, corrupt_archive, incomplete_report, the size
 * limits…) means the mail carried something report-shaped that failed: an invalid report.
 */
const notReportCodes = new Set(["no_report_in_mail", "not_a_report", "zip_unexpected_entries"]);

/**
 * A message with at least one aggregate, failure or TLS report (stored or a duplicate) is processed,
 * even if another part of it was refused (that part is kept as a rejected input). A message with no
 * report at all is "not a report" when the parser found nothing report-like, else "invalid".
 */
export function classifyOutcome(outcome: IngestOutcome): MessageDisposition {
  if (
    outcome.items.some((item) => item.kind === "aggregate" || item.kind === "failure" || item.kind === "tls")
  )
    return "processed";
  const rejected = outcome.items.filter((item) => item.kind === "rejected");
  if (rejected.length > 0 && rejected.every((item) => notReportCodes.has(item.code))) return "not_report";
  return "invalid";
}
