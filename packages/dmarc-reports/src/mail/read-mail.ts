import { TextDecoder } from "node:util";
import PostalMime from "postal-mime";
import { detectFormat } from "../containers/detect-format.js";
import { ReportParseError } from "../errors.js";
import { failureFromArf, failureFromPlainText } from "../failure/failure-report.js";
import type { ReportItem } from "../types.js";

const SAMPLE_TYPES = new Set([
  "message/rfc822",
  "text/rfc822-headers",
  "message/rfc822-headers",
  "message/global",
]);
const utf8 = new TextDecoder("utf-8");

export type ReadNested = (bytes: Uint8Array) => AsyncGenerator<ReportItem>;

/**
 * The reports a mail carries: an RFC 6591 failure report, aggregate reports as attachments (any MIME
 * type: the bytes decide) or as the body, SMTP TLS reports (RFC 8460 §5.3) as attachments, nested messages, or a plain-text failure report.
 * Mails are parsed whole: they are small, the large reports inside them are compressed.
 */
export async function* readMail(bytes: Uint8Array, readNested: ReadNested): AsyncGenerator<ReportItem> {
  const mail = await PostalMime.parse(bytes, {
    forceRfc822Attachments: true,
    attachmentEncoding: "arraybuffer",
  });
  const parts = mail.attachments.map((attachment) => ({
    mimeType: attachment.mimeType,
    bytes:
      attachment.content instanceof Uint8Array
        ? attachment.content
        : typeof attachment.content === "string"
          ? Buffer.from(attachment.content)
          : new Uint8Array(attachment.content),
  }));

  const feedback = parts.find((part) => part.mimeType === "message/feedback-report");
  if (feedback) {
    const sample = parts.find((part) => SAMPLE_TYPES.has(part.mimeType));
    yield {
      kind: "failure",
      report: failureFromArf(utf8.decode(feedback.bytes), sample ? utf8.decode(sample.bytes) : null),
    };
    return;
  }

  let found = 0;
  for (const part of parts) {
    const format = detectFormat(part.bytes.subarray(0, 4096));
    const carriesReport =
      format === "gzip" ||
      format === "zip" ||
      format === "xml" ||
      // RFC 8460 §5.3: application/tlsrpt+json (a gzip'd one, tlsrpt+gzip, is found as gzip).
      (format === "json" && /^application\/(tlsrpt\+)?json$/i.test(part.mimeType)) ||
      (format === "mail" && SAMPLE_TYPES.has(part.mimeType));
    if (!carriesReport) continue;
    found++;
    yield* readNested(part.bytes);
  }
  if (found > 0) return;

  const body = mail.text ?? "";
  if (/^\s*</.test(body) && body.includes("feedback")) {
    yield* readNested(Buffer.from(body.trim()));
    return;
  }
  const plain = failureFromPlainText(body);
  if (plain) {
    yield { kind: "failure", report: plain };
    return;
  }
  throw new ReportParseError(
    "no_report_in_mail",
    // Not its subject: a rejection's reason is kept in clear, and a subject can name a person.
    "the mail carries no aggregate, failure or TLS report",
  );
}
