import type { AlertRecord, AlertValue } from "../api/types.js";

/** Each rule as a person says it (docs/alerts.md names them). */
const ruleNames: Record<string, string> = {
  new_sender: "New sender",
  unapproved_sender: "Unapproved sender",
  dmarc_failure_share: "DMARC failure share",
  no_reports: "No reports",
  failure_report: "Failure report",
  safe_spf_changed: "Safe SPF changed",
  safe_spf_failed: "Safe SPF failed",
  spf_lookup_limit: "SPF lookup limit",
  dns_record_changed: "DNS record changed",
  onboarding_bad: "Onboarding check turned bad",
  webhook_disabled: "Webhook disabled",
  backlog_skipped: "Older reports not alerted",
  tls_failure_share: "TLS failure share",
  tls_new_result: "New TLS failure type",
};

export const ruleName = (rule: string) => ruleNames[rule] ?? words(rule);

/** The figures and items an alert may carry, in plain words; others are spelled out from their names. */
const fieldLabels: Record<string, string> = {
  sessions: "TLS sessions",
  successfulSessions: "Successful TLS sessions",
  failedSessions: "Failed TLS sessions",
  failedSessionsPercent: "Failed TLS sessions (%)",
  minSessions: "Fewest sessions to judge",
  resultType: "Failure result type",
  day: "Report day",
  senders: "Senders",
  reporters: "Reported by",
  addresses: "Addresses",
  messages: "Messages",
  failed: "Messages failing DMARC",
  failedPercent: "Failing DMARC",
  thresholdPercent: "Threshold",
  windowDays: "Window",
  baselinePercent: "The domain's usual share",
  aboveBaseline: "Far above the usual share",
  dmarcPass: "Messages passing DMARC",
  sender: "Sender",
  senderKind: "Named by",
  sourceIp: "Source IP",
  sourceIps: "Source IPs",
  reportDomain: "Report's domain",
  reporter: "Reported by",
  reportId: "Report ID",
  approved: "Approved",
  lastReportAt: "Last report",
  days: "Days without a report",
  reportedDomain: "Reported domain",
  authFailure: "Failed check",
  feedbackType: "Feedback type",
  deliveryResult: "Delivery result",
  incidents: "Incidents",
  lookups: "DNS lookups",
  lookupsWithSafeSpf: "DNS lookups with Safe SPF",
  lookupsBefore: "DNS lookups before",
  lookupsAfter: "DNS lookups after",
  original: "SPF record",
  added: "Networks added",
  removed: "Networks removed",
  code: "Code",
  message: "Message",
  retrying: "Retried later",
  dmarcBefore: "DMARC record before",
  dmarcNow: "DMARC record now",
  spfBefore: "SPF record before",
  spfNow: "SPF record now",
  problems: "Problems",
  endpointId: "Webhook",
  url: "URL",
  reason: "Reason",
  findings: "Findings not raised",
  oldestDay: "Oldest report day",
  newestDay: "Newest report day",
  byRule: "By rule",
  service: "Service",
  baseDomain: "Base domain",
  asn: "AS",
  country: "Country",
};

/** How a sender was named (figures.senderKind). */
const senderKinds: Record<string, string> = {
  service: "its service",
  base_domain: "its base domain",
  asn: "its network (AS)",
  ip: "its address",
  unknown: "nothing known yet",
};

/** "failedPercent" and "failed_percent" as "Failed percent". */
function words(name: string): string {
  const spaced = name
    .replace(/_/g, " ")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .trim();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

export const fieldLabel = (name: string) => fieldLabels[name] ?? words(name);

const integer = new Intl.NumberFormat("en", { maximumFractionDigits: 2 });

/** A figure's value as text: counts grouped, shares with %, days with "days", yes/no. */
export function fieldValue(name: string, value: AlertValue): string {
  if (value === null || value === "") return "–";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (name === "senderKind" && typeof value === "string") return senderKinds[value] ?? words(value);
  if (typeof value === "number") {
    if (/Percent$/.test(name)) return `${integer.format(value)}%`;
    if (name === "windowDays" || name === "days")
      return `${integer.format(value)} day${value === 1 ? "" : "s"}`;
    return integer.format(value);
  }
  if (/At$/.test(name) && !Number.isNaN(Date.parse(value))) {
    return `${new Date(value).toISOString().slice(0, 16).replace("T", " ")} UTC`;
  }
  return value;
}

const isoDay = (value: string) => value.slice(0, 10);

/** The report day(s) an alert is about: "2026-12-05", or "2026-12-01 – 2026-12-05". */
export function alertDays(alert: AlertRecord): string {
  const from = isoDay(alert.period.start);
  const to = isoDay(alert.period.end);
  return from === to ? from : `${from} – ${to}`;
}

/** The view that shows an alert's figures: its path with the domain and the alert's days. */
export interface AlertTarget {
  label: string;
  href: string;
}

export function alertTarget(alert: AlertRecord): AlertTarget {
  const days = { period: "custom", from: isoDay(alert.period.start), to: isoDay(alert.period.end) };
  const link = (path: string, extra: Record<string, string> = {}) => {
    const params = new URLSearchParams({ ...(alert.domain ? { domain: alert.domain } : {}), ...extra });
    return `${path}?${params.toString()}`;
  };
  const sender = typeof alert.figures.sender === "string" ? alert.figures.sender : null;
  switch (alert.rule) {
    case "new_sender":
    case "unapproved_sender":
      return {
        label: "Senders of the domain that day",
        href: link("/senders", {
          ...days,
          tab: "services",
          ...(sender && alert.domain ? { sender: `${alert.domain}|${sender}` } : {}),
        }),
      };
    case "dmarc_failure_share":
      return { label: "Overview of the domain in the window", href: link("/", days) };
    case "failure_report":
      return { label: "Failure reports of the domain that day", href: link("/failures", days) };
    case "no_reports":
      return {
        label: "Reporters of the domain",
        href: link("/reporters", { ...days, from: isoDay(alert.period.start), to: isoDay(alert.raised_at) }),
      };
    case "backlog_skipped":
      return { label: "The reports of those days", href: link("/", days) };
    case "tls_failure_share":
    case "tls_new_result":
      return { label: "TLS sessions of the domain that day", href: link("/tls", days) };
    case "webhook_disabled":
      return {
        label: "The webhook's deliveries",
        href: `/alerts?${new URLSearchParams({ webhook: String(alert.figures.endpointId ?? "") })}#webhooks`,
      };
    default:
      return { label: "The domain's records and Safe SPF", href: link("/domains") };
  }
}

/** A rule's parameters as a person says them (GET alert_rules names them). */
const paramLabels: Record<string, string> = {
  threshold_percent: "Threshold (% of messages failing)",
  window_days: "Window (days)",
  min_messages: "Fewest messages to judge",
  baseline_factor: "Times the domain's usual share (0: off)",
  baseline_days: "Days of the usual share",
  min_failed: "Fewest failing messages a day",
  min_sessions: "Fewest TLS sessions to judge",
  days: "Days without a report",
  max_report_age_days: "Oldest report day alerted (days before today)",
};

export const paramLabel = (name: string) => paramLabels[name] ?? words(name);
