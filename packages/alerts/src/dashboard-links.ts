import type { AlertRaised, AlertRuleKind } from "@dmarc-ledger/events";

/** The dashboard view that shows each rule's figures (apps/web/src/app.tsx's routes). */
const viewOf: Record<AlertRuleKind, string> = {
  new_sender: "/senders",
  unapproved_sender: "/senders",
  dmarc_failure_share: "/",
  no_reports: "/reporters",
  failure_report: "/failures",
  safe_spf_changed: "/domains",
  safe_spf_failed: "/domains",
  spf_lookup_limit: "/domains",
  dns_record_changed: "/domains",
  onboarding_bad: "/domains",
  webhook_disabled: "/settings",
  backlog_skipped: "/",
  tls_failure_share: "/tls",
  tls_new_result: "/tls",
};

/** Views whose figures are of a period: the link picks the alert's days (the views' `period=custom`). */
const periodViews = new Set(["/", "/senders", "/failures", "/reporters", "/tls"]);

/**
 * The link to the dashboard's view of an alert's figures: its view, domain and report days, as the
 * dashboard reads them from its URL (apps/web/src/lib/filters.ts, period.ts).
 */
export function dashboardLink(
  alert: Pick<AlertRaised, "rule" | "domain" | "period">,
  dashboardUrl: string,
): string {
  const path = viewOf[alert.rule] ?? "/";
  const url = new URL(path.slice(1), dashboardUrl);
  if (alert.domain) url.searchParams.set("domain", alert.domain);
  if (periodViews.has(path)) {
    url.searchParams.set("period", "custom");
    url.searchParams.set("from", alert.period.start.slice(0, 10));
    url.searchParams.set("to", alert.period.end.slice(0, 10));
  }
  return url.toString();
}
