import type { AlertRaised, AlertRuleKind } from "@dmarc-ledger/events";

export type FigureValue = string | number | boolean | null;

export const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );

/** Each rule in a few words, for a mail's subject. */
const ruleTitles: Record<AlertRuleKind, string> = {
  new_sender: "new sender",
  unapproved_sender: "sender not approved",
  dmarc_failure_share: "DMARC failures",
  no_reports: "no reports",
  failure_report: "failure report",
  safe_spf_changed: "Safe SPF changed",
  safe_spf_failed: "Safe SPF failed",
  spf_lookup_limit: "SPF lookup limit",
  dns_record_changed: "DNS record changed",
  onboarding_bad: "DNS check failed",
  webhook_disabled: "webhook disabled",
  backlog_skipped: "older reports imported",
  tls_failure_share: "TLS failures",
  tls_new_result: "new TLS failure",
};

export function ruleTitle(alert: Pick<AlertRaised, "rule" | "period">): string {
  // A pause (pauseEndpoint) is told under the webhook_disabled rule.
  if (alert.rule === "webhook_disabled" && alert.period.key.includes(":paused:")) return "webhook paused";
  return ruleTitles[alert.rule] ?? alert.rule.replaceAll("_", " ");
}

/** What a finding's items are, as the heading of their list. */
export function itemsHeading(rule: AlertRuleKind): string {
  if (rule === "new_sender") return "New senders";
  if (rule === "unapproved_sender") return "Senders not approved";
  if (rule === "tls_new_result") return "New failure result types";
  return "Included";
}

/** Each figure's name in plain words (docs/alerts.md says what each rule's figures are). */
const fieldLabels: Record<string, string> = {
  sessions: "TLS sessions",
  successfulSessions: "Successful TLS sessions",
  failedSessions: "Failed TLS sessions",
  failedSessionsPercent: "Failed TLS sessions (%)",
  minSessions: "Fewest sessions to judge",
  resultType: "Failure result type",
  sender: "Sender",
  senderKind: "Named by",
  sourceIp: "Source address",
  messages: "Messages",
  dmarcPass: "Passing DMARC",
  failed: "Failing DMARC",
  failedPercent: "Share failing DMARC",
  thresholdPercent: "Alert threshold",
  windowDays: "Days counted",
  baselinePercent: "Usual failing share",
  aboveBaseline: "Above the usual share",
  reportDomain: "Domain in the report",
  reporter: "Reported by",
  reporters: "Reported by",
  reportId: "Report id",
  approved: "Approval",
  lastReportAt: "Last report received",
  days: "Days without reports",
  reportedDomain: "Reported domain",
  authFailure: "Failed check",
  feedbackType: "Kind of report",
  deliveryResult: "What the receiver did",
  incidents: "Incidents",
  lookups: "DNS lookups its SPF record needs",
  lookupsWithSafeSpf: "DNS lookups with Safe SPF",
  original: "SPF record",
  added: "Networks added",
  removed: "Networks removed",
  lookupsBefore: "DNS lookups before",
  lookupsAfter: "DNS lookups after",
  code: "Error code",
  message: "Error",
  retrying: "Tried again",
  dmarcBefore: "DMARC record before",
  dmarcNow: "DMARC record now",
  spfBefore: "SPF record before",
  spfNow: "SPF record now",
  problems: "Problems found",
  endpointId: "Endpoint id",
  url: "Endpoint",
  reason: "Why",
  failingSince: "Failing since",
  lastSuccessAt: "Last successful delivery",
  senders: "Senders",
  firstSeen: "First seen",
  addresses: "Addresses",
  day: "Report day",
  findings: "Findings not raised",
  oldestDay: "Oldest report day",
  newestDay: "Newest report day",
  byRule: "By rule",
};

/** Where a rule's figure (or its items', `item: true`) means something narrower than the field's usual label. */
const ruleFieldLabels: Partial<Record<AlertRuleKind, Record<string, string>>> = {
  unapproved_sender: { failed: "Messages failing DMARC" },
  dmarc_failure_share: { messages: "Messages in the days counted" },
};
const itemFieldLabels: Partial<Record<AlertRuleKind, Record<string, string>>> = {
  new_sender: { messages: "Messages from it", addresses: "Its addresses" },
  unapproved_sender: { messages: "Messages from it", failed: "Of them failing DMARC" },
};

/** A field without a label: its camelCase name as words ("sourceIp" → "Source ip"). */
const asWords = (field: string) => {
  const words = field
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replaceAll("_", " ")
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

export function fieldLabel(rule: AlertRuleKind, field: string, item = false): string {
  return (
    (item ? itemFieldLabels[rule]?.[field] : undefined) ??
    ruleFieldLabels[rule]?.[field] ??
    fieldLabels[field] ??
    asWords(field)
  );
}

/** The values a field takes, in words: how a sender was named, whether it is approved. */
const valueWords: Record<string, Record<string, string>> = {
  senderKind: {
    service: "a known service",
    base_domain: "the base domain of its name",
    asn: "its network (no name found)",
    ip: "its address (no name found)",
    unknown: "nothing (no name or network found)",
  },
  approved: { true: "approved", false: "refused", null: "not decided" },
  lastSuccessAt: { null: "never" },
};

const percentFields = new Set(["failedPercent", "thresholdPercent", "baselinePercent"]);
const timeFields = new Set(["lastReportAt", "failingSince", "lastSuccessAt", "firstSeen"]);

/** A figure's value in words; null when it has none to show (absent, empty). */
export function figureText(field: string, value: FigureValue): string | null {
  const words = valueWords[field]?.[String(value)];
  if (words !== undefined) return words;
  if (value === null || value === "") return null;
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "number") {
    const number = value.toLocaleString("en-US", { maximumFractionDigits: 2 });
    return percentFields.has(field) ? `${number}%` : number;
  }
  if (percentFields.has(field) && /^\d+(\.\d+)?$/.test(value)) return `${value}%`;
  if (timeFields.has(field) && !Number.isNaN(Date.parse(value)))
    return `${new Date(value).toISOString().slice(0, 16).replace("T", " ")} UTC`;
  return value;
}
