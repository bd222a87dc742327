import type { AlertRuleKind } from "@dmarc-ledger/events";
import type { Kysely } from "kysely";
import type { AlertsSchema } from "./schema.js";

/** A parameter of a rule: its default and the values it may take. */
interface ParamSpec {
  default: number;
  min: number;
  max: number;
  description: string;
}

interface RuleSpec {
  description: string;
  params: Record<string, ParamSpec>;
}

const emailParam: ParamSpec = {
  default: 1,
  min: 0,
  max: 1,
  description: "1: the tenant's people get each alert of this rule by e-mail; 0: webhooks only",
};

/** The report-day rules' window: a finding about an older report day is not raised. */
const reportAgeParam: ParamSpec = {
  default: 3,
  min: 0,
  max: 3650,
  description:
    "no alert about a report day more than this many days before today (UTC): a backlog of old reports is counted, not raised",
};

/** Every rule, on by default for every tenant (docs/alerts.md says what each one watches). */
export const ruleSpecs: { readonly [K in AlertRuleKind]: RuleSpec } = {
  new_sender: {
    description:
      "Senders (a service or base domain, else an address) send for a domain for the first time: one alert per domain and report day, the senders listed (the domain's first report is its baseline).",
    params: { max_report_age_days: reportAgeParam, email: emailParam },
  },
  unapproved_sender: {
    description:
      "A sender (a service, a base domain, an AS, as aggregate_by_sender names it) that is not approved for the domain sent mail failing DMARC.",
    params: {
      min_failed: {
        default: 1,
        min: 1,
        max: 1_000_000_000,
        description: "no alert for a sender with fewer failing messages than this in the day",
      },
      max_report_age_days: reportAgeParam,
      email: emailParam,
    },
  },
  dmarc_failure_share: {
    description:
      "The share of a domain's messages failing DMARC over a window of days ending on a report's day is above a threshold, or far above the domain's own baseline.",
    params: {
      threshold_percent: { default: 10, min: 0, max: 100, description: "raise above this share, in percent" },
      window_days: { default: 1, min: 1, max: 31, description: "the window, in UTC days" },
      min_messages: {
        default: 20,
        min: 1,
        max: 1_000_000_000,
        description: "no alert for a window (or a baseline) with fewer messages than this",
      },
      baseline_factor: {
        default: 3,
        min: 0,
        max: 1000,
        description:
          "also raise when the share is this many times the domain's own share before the window (and 2 points more); 0: off",
      },
      baseline_days: {
        default: 28,
        min: 1,
        max: 365,
        description: "the days before the window that make the baseline",
      },
      max_report_age_days: reportAgeParam,
      email: emailParam,
    },
  },
  no_reports: {
    description: "No report has arrived for a domain for a number of days.",
    params: {
      days: { default: 3, min: 1, max: 365, description: "days without a report" },
      email: emailParam,
    },
  },
  failure_report: {
    description: "A failure (forensic) report was received for a domain.",
    params: { max_report_age_days: reportAgeParam, email: emailParam },
  },
  safe_spf_changed: {
    description: "Safe SPF was computed again with a different result.",
    params: { email: emailParam },
  },
  safe_spf_failed: {
    description: "Safe SPF failed to compute or to refresh.",
    params: { email: emailParam },
  },
  spf_lookup_limit: {
    description: "The domain's own SPF record needs more than the 10 DNS lookups SPF allows.",
    params: { email: emailParam },
  },
  dns_record_changed: {
    description: "A domain's published DMARC or SPF record changed (the periodic check of live DNS).",
    params: { email: emailParam },
  },
  onboarding_bad: {
    description: "A domain's onboarding check (live DNS) turned bad: it has problems it did not have.",
    params: { email: emailParam },
  },
  tls_failure_share: {
    description:
      "The share of a domain's SMTP TLS sessions that failed on a report day (its TLS reports, RFC 8460) is above a threshold.",
    params: {
      threshold_percent: {
        default: 5,
        min: 0,
        max: 100,
        description: "raise above this share of failed sessions, in percent",
      },
      min_sessions: {
        default: 100,
        min: 1,
        max: 1_000_000_000,
        description: "no alert for a day with fewer sessions than this",
      },
      max_report_age_days: reportAgeParam,
      email: emailParam,
    },
  },
  tls_new_result: {
    description:
      "A domain's TLS reports show a failure result type (RFC 8460, such as certificate-expired) the domain had not had before.",
    params: { max_report_age_days: reportAgeParam, email: emailParam },
  },
  backlog_skipped: {
    description:
      "Reports of days older than a rule's window were imported: how many findings were not raised, said once per backlog.",
    params: { email: emailParam },
  },
  webhook_disabled: {
    description:
      "A webhook endpoint was paused after no delivery succeeded for WEBHOOK_PAUSE_AFTER; mailed to the tenant's admins only.",
    params: { email: emailParam },
  },
};

export const ruleKinds = Object.keys(ruleSpecs) as AlertRuleKind[];

export function isRuleKind(value: string): value is AlertRuleKind {
  return Object.hasOwn(ruleSpecs, value);
}

export class InvalidRuleError extends Error {
  override readonly name = "InvalidRuleError";
}

/** A rule as it applies: enabled, with every parameter (defaults filled in). */
export interface EffectiveRule {
  rule: AlertRuleKind;
  enabled: boolean;
  params: Record<string, number>;
  /** Whether the tenant has set it (false: the defaults). */
  set: boolean;
}

export function defaultParams(rule: AlertRuleKind): Record<string, number> {
  return Object.fromEntries(
    Object.entries(ruleSpecs[rule].params).map(([name, spec]) => [name, spec.default]),
  );
}

/** Checks a rule's parameters; every wrong one is named at once. Unnamed ones take their default. */
export function validateParams(rule: AlertRuleKind, params: Record<string, unknown>): Record<string, number> {
  const specs = ruleSpecs[rule].params;
  const problems: string[] = [];
  const out = defaultParams(rule);
  for (const [name, value] of Object.entries(params)) {
    const spec = specs[name];
    if (!spec) {
      problems.push(
        `${name}: not a parameter of ${rule} (it has ${Object.keys(specs).join(", ") || "none"})`,
      );
      continue;
    }
    if (typeof value !== "number" || !Number.isFinite(value) || value < spec.min || value > spec.max) {
      problems.push(`${name}: a number from ${spec.min} to ${spec.max}`);
      continue;
    }
    out[name] = value;
  }
  if (problems.length > 0) throw new InvalidRuleError(problems.join("; "));
  return out;
}

/** A tenant's rules, every kind, its settings over the defaults. */
export async function tenantRules(db: Kysely<AlertsSchema>, tenantId: string): Promise<EffectiveRule[]> {
  const rows = await db.selectFrom("alert_rule").selectAll().where("tenant_id", "=", tenantId).execute();
  const byRule = new Map(rows.map((row) => [row.rule, row]));
  return ruleKinds.map((rule) => {
    const row = byRule.get(rule);
    return row
      ? {
          rule,
          enabled: row.enabled,
          params: { ...defaultParams(rule), ...JSON.parse(row.params) },
          set: true,
        }
      : { rule, enabled: true, params: defaultParams(rule), set: false };
  });
}

/** One rule of a tenant, as it applies. */
export async function tenantRule(
  db: Kysely<AlertsSchema>,
  tenantId: string,
  rule: AlertRuleKind,
): Promise<EffectiveRule> {
  const row = await db
    .selectFrom("alert_rule")
    .selectAll()
    .where("tenant_id", "=", tenantId)
    .where("rule", "=", rule)
    .executeTakeFirst();
  return row
    ? { rule, enabled: row.enabled, params: { ...defaultParams(rule), ...JSON.parse(row.params) }, set: true }
    : { rule, enabled: true, params: defaultParams(rule), set: false };
}
