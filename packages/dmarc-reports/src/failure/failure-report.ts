import { hostNameOf } from "@dmarc-ledger/domain-names";
import { decodeWords } from "postal-mime";
import { normaliseIp } from "../aggregate/normalise.js";
import { ReportParseError } from "../errors.js";
import { identityOf } from "../identity.js";
import { MAX_REPORT_MESSAGES, MAX_SAMPLE_HEADER_CHARS, MAX_SUBJECT_CHARS } from "../options.js";
import type { FailureReport } from "../types.js";
import { firstField, headerBlockOf, headerFieldsOf, toUtcIso } from "./header-block.js";

interface Facts {
  feedbackType: string;
  reportedDomain: string | null;
  arrivalDate: string | null;
  sourceIp: string | null;
  authFailure: string | null;
  deliveryResult: string | null;
  incidents: string | null;
  originalMailFrom: string | null;
  originalRcptTo: string | null;
  headers: string;
}

function stripAngles(value: string | null): string | null {
  if (value === null) return null;
  const bare = value
    .trim()
    .replace(/^<(.*)>$/, "$1")
    .trim();
  return bare === "" ? null : bare;
}

function domainOfAddress(value: string | null): string | null {
  const match = value ? /@([A-Za-z0-9.-]+)/.exec(value) : null;
  return match ? match[1]!.toLowerCase() : null;
}

function assemble(facts: Facts): FailureReport {
  const warnings: string[] = [];
  const sampleFields = headerFieldsOf(facts.headers);
  const rawSubject = firstField(sampleFields, "subject");
  let subject = rawSubject === null ? "" : decodeWords(rawSubject);
  if (subject.length > MAX_SUBJECT_CHARS) {
    subject = subject.slice(0, MAX_SUBJECT_CHARS);
    warnings.push(`Subject cut to ${MAX_SUBJECT_CHARS} characters`);
  }
  let headers = facts.headers;
  if (headers.length > MAX_SAMPLE_HEADER_CHARS) {
    headers = headers.slice(0, MAX_SAMPLE_HEADER_CHARS);
    warnings.push(`sample headers cut to ${MAX_SAMPLE_HEADER_CHARS} characters`);
  }
  let claimed = facts.reportedDomain?.trim() ?? "";
  if (claimed === "") {
    claimed = domainOfAddress(firstField(sampleFields, "from")) ?? "";
    if (claimed !== "") warnings.push("no Reported-Domain: taken from the sample's From");
  }
  const reportedDomain = hostNameOf(claimed);
  if (reportedDomain === null) {
    throw new ReportParseError(
      "invalid_domain",
      claimed === ""
        ? "failure report names no reported domain"
        : `failure report's domain "${claimed.slice(0, 80)}" is not a host name`,
    );
  }
  const arrivalDate = toUtcIso(facts.arrivalDate);
  if (arrivalDate === null)
    warnings.push(`no usable arrival date${facts.arrivalDate ? `: "${facts.arrivalDate}"` : ""}`);
  let sourceIp: string | null = null;
  if (facts.sourceIp) {
    sourceIp = normaliseIp(facts.sourceIp);
    if (sourceIp === null) warnings.push(`invalid Source-IP "${facts.sourceIp.slice(0, 64)}"`);
  }
  const incidents =
    facts.incidents && /^\d+$/.test(facts.incidents.trim()) ? Number(facts.incidents.trim()) : 1;
  if (incidents > MAX_REPORT_MESSAGES) {
    throw new ReportParseError(
      "count_out_of_range",
      `failure report counts ${facts.incidents?.trim().slice(0, 32)} incidents, over the limit of ${MAX_REPORT_MESSAGES}`,
    );
  }
  const report = {
    feedbackType: facts.feedbackType.toLowerCase(),
    reportedDomain,
    arrivalDate,
    subject,
    sourceIp,
    authFailure: facts.authFailure?.toLowerCase() || null,
    deliveryResult: facts.deliveryResult?.toLowerCase() || null,
    incidents,
    headers,
    originalMailFrom: stripAngles(facts.originalMailFrom),
    originalRcptTo: stripAngles(facts.originalRcptTo),
  };
  const identity = identityOf([
    "failure",
    report.feedbackType,
    report.reportedDomain,
    report.arrivalDate,
    report.sourceIp,
    report.originalMailFrom,
    report.originalRcptTo,
    report.headers,
  ]);
  return { ...report, identity, warnings };
}

/** RFC 6591: the machine-readable message/feedback-report part plus the reported message (or its headers). */
export function failureFromArf(feedbackPart: string, sample: string | null): FailureReport {
  const fields = headerFieldsOf(feedbackPart);
  const get = (name: string) => firstField(fields, name);
  return assemble({
    feedbackType: get("feedback-type") ?? "auth-failure",
    reportedDomain: get("reported-domain"),
    arrivalDate: get("arrival-date") ?? get("received-date"),
    sourceIp: get("source-ip"),
    authFailure: get("auth-failure"),
    deliveryResult: get("delivery-result"),
    incidents: get("incidents"),
    originalMailFrom: get("original-mail-from"),
    originalRcptTo: get("original-rcpt-to"),
    headers: sample === null ? "" : headerBlockOf(sample),
  });
}

const PLAIN_HEADERS_MARKER = /^-{2,}[^\n]*\bcopy of the (?:message )?headers\b[^\n]*$/im;

/**
 * Failure mails without an ARF part, as Exim and cPanel send them: "Sender Domain:", "Sender IP Address:",
 * "Received date:" lines, then the reported headers after a "---- This is a copy of the headers" line.
 */
export function failureFromPlainText(text: string): FailureReport | null {
  const normalised = text.replace(/\r\n?/g, "\n");
  const marker = PLAIN_HEADERS_MARKER.exec(normalised);
  const domain = /^\s*Sender Domain:\s*(\S+)\s*$/im.exec(normalised)?.[1] ?? null;
  if (!marker && !domain) return null;
  const preamble = marker ? normalised.slice(0, marker.index) : normalised;
  const headers = marker ? headerBlockOf(normalised.slice(marker.index + marker[0].length)) : "";
  return assemble({
    feedbackType: "auth-failure",
    reportedDomain: domain,
    arrivalDate: /^\s*Received date:\s*(.+?)\s*$/im.exec(preamble)?.[1] ?? null,
    sourceIp: /^\s*Sender IP Address:\s*(\S+)\s*$/im.exec(preamble)?.[1] ?? null,
    authFailure: null,
    deliveryResult: null,
    incidents: null,
    originalMailFrom: null,
    originalRcptTo: null,
    headers,
  });
}
