import { createHash } from "node:crypto";
import type { z } from "zod";
import { TlsReportError, type TlsReportErrorCode } from "./errors.js";
import { checkJsonDepth } from "./json-depth.js";
import { tlsLimits } from "./limits.js";
import { normaliseAddress, normaliseHostName, unixSecondsOf } from "./normalise.js";
import { type ReportJson, reportSchema } from "./schema.js";
import type { TlsFailureDetail, TlsPolicyResult, TlsReport } from "./types.js";

const utf8 = new TextDecoder("utf-8", { fatal: false });

/**
 * Reads one SMTP TLS report (RFC 8460 §4) from its JSON bytes (decompressed). Throws
 * TlsReportError with the reason when the bytes are not one, or pass a bound of tlsLimits.
 */
export function parseTlsReport(bytes: Uint8Array): TlsReport {
  if (bytes.byteLength > tlsLimits.maxJsonBytes) {
    throw new TlsReportError("json_too_large", `the JSON is larger than ${tlsLimits.maxJsonBytes} bytes`);
  }
  checkJsonDepth(bytes, tlsLimits.maxDepth);
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes).replace(/^\uFEFF/, ""));
  } catch (error) {
    throw new TlsReportError("malformed_json", `the JSON does not parse: ${(error as Error).message}`);
  }
  checkArrayLengths(value);
  const parsed = reportSchema.safeParse(value);
  if (!parsed.success) throw refusalOf(parsed.error);
  return normalise(parsed.data);
}

/**
 * Any array longer than a report may hold is refused before the schema reads it: the schema
 * would otherwise judge (and note an issue for) each of a million entries.
 */
function checkArrayLengths(value: unknown): void {
  if (Array.isArray(value)) {
    if (value.length > tlsLimits.maxFailureDetails) {
      throw new TlsReportError("too_many_entries", `a list holds ${value.length} entries`);
    }
    for (const entry of value) checkArrayLengths(entry);
  } else if (value !== null && typeof value === "object") {
    for (const entry of Object.values(value)) checkArrayLengths(entry);
  }
}

function refusalOf(error: z.ZodError): TlsReportError {
  const issue = error.issues[0]!;
  const where = issue.path.length === 0 ? "the report" : pathOf(issue.path);
  let code: TlsReportErrorCode = "invalid_tls_report";
  if (issue.code === "too_big") {
    code =
      issue.origin === "string"
        ? "field_too_long"
        : issue.origin === "array"
          ? "too_many_entries"
          : "count_out_of_range";
  } else if (issue.code === "too_small" && issue.origin === "number") code = "count_out_of_range";
  return new TlsReportError(code, `not an SMTP TLS report: ${where}: ${issue.message}`);
}

function pathOf(path: readonly PropertyKey[]): string {
  return path
    .map((part, index) =>
      typeof part === "number" ? `[${part}]` : `${index === 0 ? "" : "."}${String(part)}`,
    )
    .join("");
}

function normalise(json: ReportJson): TlsReport {
  const warnings: string[] = [];
  const begin = unixSecondsOf(json["date-range"]["start-datetime"]);
  const end = unixSecondsOf(json["date-range"]["end-datetime"]);
  if (begin === null || end === null) {
    throw new TlsReportError("invalid_date_range", "date-range is not two RFC 3339 date-times");
  }
  if (end < begin || end - begin > tlsLimits.maxRangeSeconds) {
    throw new TlsReportError("invalid_date_range", "date-range ends before it starts or spans over 31 days");
  }
  let failureDetails = 0;
  const policies: TlsPolicyResult[] = json.policies.map((entry, index) => {
    const { policy, summary } = entry;
    const details = entry["failure-details"] ?? [];
    failureDetails += details.length;
    const mxHosts = listOf(policy["mx-host"] ?? policy["mx-host-pattern"]);
    return {
      policyType: policy["policy-type"].trim().toLowerCase(),
      policyDomain: normaliseHostName(policy["policy-domain"] ?? ""),
      policyStrings: listOf(policy["policy-string"]),
      mxHosts,
      successfulSessions: summary["total-successful-session-count"],
      failedSessions: summary["total-failure-session-count"],
      failures: details.map((detail) => failureOf(detail, index)),
    };
  });
  if (failureDetails > tlsLimits.maxFailureDetails) {
    throw new TlsReportError("too_many_entries", `the report holds ${failureDetails} failure details`);
  }
  fillMissingDomains(policies, warnings);
  const organization = json["organization-name"].trim();
  const reportId = json["report-id"].trim();
  if (organization === "" || reportId === "") {
    throw new TlsReportError(
      "invalid_tls_report",
      "not an SMTP TLS report: organization-name or report-id is empty",
    );
  }
  return {
    identity: identityOf(organization, reportId),
    organization,
    contactInfo: json["contact-info"]?.trim() || null,
    reportId,
    begin,
    end,
    policies,
    warnings,
  };
}

type DetailJson = NonNullable<ReportJson["policies"][number]["failure-details"]>[number];

function failureOf(detail: DetailJson, _policy: number): TlsFailureDetail {
  const optional = (raw: string | null | undefined) => (raw?.trim() ? raw.trim() : null);
  const host = optional(detail["receiving-mx-hostname"]);
  const sending = optional(detail["sending-mta-ip"]);
  const receiving = optional(detail["receiving-ip"]);
  return {
    resultType: detail["result-type"].trim().toLowerCase(),
    sendingMtaIp: sending === null ? null : normaliseAddress(sending),
    receivingMxHostname: host === null ? null : normaliseHostName(host),
    receivingMxHelo: optional(detail["receiving-mx-helo"]),
    receivingIp: receiving === null ? null : normaliseAddress(receiving),
    failedSessions: detail["failed-session-count"],
    additionalInformation: optional(detail["additional-information"] ?? detail["additional-info-uri"]),
    failureReasonCode: optional(detail["failure-reason-code"] ?? detail["failure-error-code"]),
  };
}

function listOf(raw: string | string[] | null | undefined): string[] {
  if (raw === null || raw === undefined) return [];
  return (typeof raw === "string" ? [raw] : raw).map((entry) => entry.trim()).filter((entry) => entry !== "");
}

/**
 * A report is about one policy domain (RFC 8460 §4): an entry without one (no-policy-found from
 * Postfix's reporter) is that of the others, when they name exactly one.
 */
function fillMissingDomains(policies: TlsPolicyResult[], warnings: string[]): void {
  const named = new Set(policies.map((policy) => policy.policyDomain).filter((domain) => domain !== ""));
  for (const policy of policies) {
    if (policy.policyDomain !== "") continue;
    if (named.size === 1) {
      policy.policyDomain = [...named][0]!;
      warnings.push(
        `a ${policy.policyType} entry names no policy-domain: counted for ${policy.policyDomain}`,
      );
    } else {
      warnings.push(`a ${policy.policyType} entry names no policy-domain: it counts for no domain`);
    }
  }
}

/** Length-prefixed, as the DMARC reports' identities are, and apart from them by its first part. */
export function identityOf(organization: string, reportId: string): string {
  const hash = createHash("sha256");
  for (const part of ["tlsrpt", organization, reportId]) hash.update(`${part.length}:${part};`);
  return hash.digest("hex");
}
