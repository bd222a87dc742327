import type { AlertRaised, AlertRuleKind } from "@dmarc-ledger/events";
import type { Kysely, Transaction } from "kysely";
import { type AlertDecision, raise } from "./alert-evaluator.js";
import { alertIdOf } from "./alert-id.js";
import { failureShareOf } from "./failure-share.js";
import { type EffectiveRule, tenantRule } from "./rules.js";
import type { AlertFindingTable, AlertsSchema } from "./schema.js";
import { approvalOf, sendersOf } from "./sender-names.js";
import { tlsFailureShareOf, tlsResultFigures } from "./tls-findings.js";

type Cause = AlertRaised["causedBy"];

/** The rules whose alerts are findings about one domain and one report day. */
export type ReportDayRule =
  | "new_sender"
  | "unapproved_sender"
  | "dmarc_failure_share"
  | "tls_failure_share"
  | "tls_new_result";

/** One member of a finding: a sender, by its name or, without one, by its address. */
export interface FindingMember {
  /** `sender:<name>` or `ip:<address>`: a member is listed once. */
  key: string;
  sender: string;
  /** How it is named: service, base_domain, asn, or ip (by its address). */
  kind: string;
  /** The address that made it a member (the first seen). */
  sourceIp: string;
  /** The organisation whose report showed it first. */
  reporter: string;
}

const dayMs = 86_400_000;
/**
 * Reports of a day keep arriving for about two days after it ends (receivers send once a day,
 * some late): until then an alert's figures are the day's so far.
 */
const reportsStillArriveMs = 2 * dayMs;

const utcDay = (at: Date) => at.toISOString().slice(0, 10);

/** Whether a report day is older than the rule's window (max_report_age_days before today, UTC). */
export function outsideWindow(day: string, rule: EffectiveRule, now: Date): boolean {
  const days = rule.params.max_report_age_days ?? 3;
  return day < utcDay(new Date(now.getTime() - days * dayMs));
}

/**
 * Records what the evaluator found about a domain's report day (in its transaction): new members
 * are added, and the finding is marked for the sender (sendFindings) to look at. A finding about
 * a day outside the rule's window is not recorded but counted as skipped (when `skippable`: a
 * threshold rule counts only a day that met it). Returns what became of it.
 */
export async function recordFinding(
  trx: Transaction<AlertsSchema>,
  finding: {
    tenantId: string;
    rule: ReportDayRule;
    domain: string;
    day: string;
    members: FindingMember[];
    cause: Cause;
    skippable?: boolean;
  },
  now: Date,
  /** When it changed, by the clock sendFindings settles by (the evaluator's: `now`). */
  changedAt: Date = now,
): Promise<"recorded" | "skipped" | "off"> {
  const rule = await tenantRule(trx, finding.tenantId, finding.rule);
  if (!rule.enabled) return "off";
  const key = { tenant_id: finding.tenantId, rule: finding.rule, domain: finding.domain, day: finding.day };
  if (outsideWindow(finding.day, rule, now)) {
    if (finding.skippable === false) return "off";
    await countSkipped(
      trx,
      { tenantId: finding.tenantId, rule: finding.rule, domain: finding.domain, day: finding.day },
      now,
    );
    return "skipped";
  }
  const row = await trx
    .selectFrom("alert_finding")
    .select(["members", "causes"])
    .where("tenant_id", "=", key.tenant_id)
    .where("rule", "=", key.rule)
    .where("domain", "=", key.domain)
    .where("day", "=", key.day)
    .forUpdate()
    .executeTakeFirst();
  const members: Record<string, FindingMember> = row ? JSON.parse(row.members) : {};
  for (const member of finding.members) members[member.key] ??= member;
  // The first cause and the latest: enough to find the reports again, bounded however many came.
  const first: Cause = row ? (JSON.parse(row.causes) as Cause).slice(0, 1) : [];
  const causes = [...first, ...finding.cause.filter((cause) => cause.position !== first[0]?.position)];
  const values = {
    members: JSON.stringify(members),
    causes: JSON.stringify(causes.slice(0, 3)),
    changed_at: changedAt,
    pending: true,
  };
  if (row) {
    await trx
      .updateTable("alert_finding")
      .set(values)
      .where("tenant_id", "=", key.tenant_id)
      .where("rule", "=", key.rule)
      .where("domain", "=", key.domain)
      .where("day", "=", key.day)
      .execute();
  } else {
    await trx
      .insertInto("alert_finding")
      .values({ ...key, ...values, notices: 0, sent_members: "[]", first_alert_id: null, sent_verdict: null })
      .execute();
  }
  return "recorded";
}

/** A finding about a day outside its rule's window, for backlog_skipped to count (once per day). */
export async function countSkipped(
  trx: Transaction<AlertsSchema>,
  finding: { tenantId: string; rule: AlertRuleKind; domain: string; day: string },
  now: Date,
): Promise<void> {
  await trx
    .insertInto("alert_skipped_finding")
    .values({
      tenant_id: finding.tenantId,
      rule: finding.rule,
      domain: finding.domain,
      day: finding.day,
      recorded_at: now,
      noticed: false,
    })
    .onConflict((oc) => oc.columns(["tenant_id", "rule", "domain", "day"]).doNothing())
    .execute();
}

/**
 * Turns settled findings into alerts: a finding unchanged for `settleMs` (so that a batch of
 * reports gives one alert, not one per report) is looked at with the day's figures as they are
 * now. Its first alert goes when its verdict is first met; a later one (revising the first) only
 * when members are added (new senders) or a threshold's verdict changes. Returns how many alerts
 * it raised.
 */
export async function sendFindings(
  db: Kysely<AlertsSchema>,
  options: { now: Date; settleMs: number; limit?: number },
): Promise<number> {
  const due = await db
    .selectFrom("alert_finding")
    .select(["tenant_id", "rule", "domain", "day"])
    .where("pending", "=", true)
    .where("changed_at", "<=", new Date(options.now.getTime() - options.settleMs))
    .orderBy("changed_at")
    .limit(options.limit ?? 100)
    .execute();
  let raised = 0;
  for (const key of due) {
    await db.transaction().execute(async (trx) => {
      // Another process may hold it: it sends it.
      const row = await trx
        .selectFrom("alert_finding")
        .selectAll()
        .where("tenant_id", "=", key.tenant_id)
        .where("rule", "=", key.rule)
        .where("domain", "=", key.domain)
        .where("day", "=", key.day)
        .where("pending", "=", true)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!row) return;
      const decided = await decideNotice(trx, row, options.now);
      if (decided && (await raise(trx, decided.alert, options.now))) raised++;
      await trx
        .updateTable("alert_finding")
        .set({
          pending: false,
          ...(decided
            ? {
                first_alert_id: row.first_alert_id ?? decided.alertId,
                notices: row.notices + 1,
                sent_members: JSON.stringify(decided.sentMembers),
                sent_verdict: decided.verdict,
              }
            : {}),
        })
        .where("tenant_id", "=", row.tenant_id)
        .where("rule", "=", row.rule)
        .where("domain", "=", row.domain)
        .where("day", "=", row.day)
        .execute();
    });
  }
  return raised;
}

interface Notice {
  alertId: string;
  alert: AlertDecision;
  sentMembers: string[];
  verdict: boolean;
}

/** The alert a finding calls for now, if any. */
async function decideNotice(
  trx: Transaction<AlertsSchema>,
  row: AlertFindingTable,
  now: Date,
): Promise<Notice | null> {
  const rule = await tenantRule(trx, row.tenant_id, row.rule);
  if (!rule.enabled) return null;
  const soFar = now.getTime() < Date.parse(`${row.day}T00:00:00Z`) + dayMs + reportsStillArriveMs;
  const sent = new Set<string>(JSON.parse(row.sent_members));
  const members = Object.values(JSON.parse(row.members) as Record<string, FindingMember>);
  const causedBy = JSON.parse(row.causes) as Cause;
  const notice = row.notices;
  const key = notice === 0 ? `day:${row.day}` : `day:${row.day}:notice:${notice}`;
  const alertId = alertIdOf(row.tenant_id, row.rule, row.domain, key);
  const base = {
    tenantId: row.tenant_id,
    rule: row.rule,
    domain: row.domain,
    key,
    period: { start: `${row.day}T00:00:00.000Z`, end: `${row.day}T23:59:59.999Z` },
    soFar,
    revises: row.first_alert_id,
    causedBy,
  };
  const asOf = soFar ? " so far" : "";
  switch (row.rule) {
    case "new_sender": {
      const fresh = members.filter((member) => !sent.has(member.key));
      if (fresh.length === 0) return null;
      const items = await senderFigures(trx, row.domain, row.day, fresh);
      const messages = items.reduce((sum, item) => sum + item.messages, 0);
      const dmarcPass = items.reduce((sum, item) => sum + item.dmarcPass, 0);
      const reporters = [...new Set(fresh.map((member) => member.reporter).filter(Boolean))].sort();
      const what = `${fresh.length}${notice > 0 ? " more" : ""} new sender${fresh.length === 1 ? "" : "s"}`;
      return {
        alertId,
        sentMembers: [...sent, ...fresh.map((member) => member.key)],
        verdict: true,
        alert: {
          ...base,
          summary: `${what} for ${row.domain} on ${row.day}: ${listed(items.map((item) => String(item.sender)))} (${messages} messages${asOf}, ${dmarcPass} passing DMARC; reported by ${listed(reporters)}).`,
          figures: {
            day: row.day,
            senders: fresh.length,
            messages,
            dmarcPass,
            reporters: reporters.join(", "),
          },
          items,
        },
      };
    }
    case "unapproved_sender": {
      const items: {
        sender: string;
        senderKind: string;
        approved: boolean | null;
        failed: number;
        sourceIp: string;
      }[] = [];
      for (const member of members) {
        const approved = await approvalOf(trx, row.domain, member.sourceIp, member.sender);
        if (approved === true) continue;
        const counted = await trx
          .selectFrom("alert_sender_day")
          .select("failed")
          .where("domain", "=", row.domain)
          .where("sender", "=", member.sender)
          .where("day", "=", row.day)
          .executeTakeFirst();
        const failed = Number(counted?.failed ?? 0);
        if (failed < rule.params.min_failed!) continue;
        items.push({
          sender: member.sender,
          senderKind: member.kind,
          approved,
          failed,
          sourceIp: member.sourceIp,
        });
      }
      const fresh = items.filter((item) => !sent.has(`sender:${item.sender}`));
      if (fresh.length === 0) return null;
      const failed = fresh.reduce((sum, item) => sum + item.failed, 0);
      const what = `${fresh.length}${notice > 0 ? " more" : ""} sender${fresh.length === 1 ? "" : "s"} not approved for ${row.domain}`;
      return {
        alertId,
        sentMembers: [...sent, ...fresh.map((item) => `sender:${item.sender}`)],
        verdict: true,
        alert: {
          ...base,
          summary: `${what} sent ${failed} message(s) failing DMARC on ${row.day}${asOf}: ${listed(fresh.map((item) => item.sender)).replace(/\.$/, "")}.`,
          figures: { day: row.day, senders: fresh.length, failed },
          items: fresh.sort((a, b) => b.failed - a.failed || (a.sender < b.sender ? -1 : 1)),
        },
      };
    }
    case "dmarc_failure_share": {
      const share = await failureShareOf(trx, row.domain, row.day, rule);
      const verdict = share?.verdict ?? false;
      // The first alert when the threshold is met; after it, a notice only when the verdict turns.
      if (row.sent_verdict === null ? !verdict : row.sent_verdict === verdict) return null;
      const figures = share!.figures;
      const summary = verdict
        ? `${figures.failedPercent}% of ${row.domain}'s ${figures.messages} messages failed DMARC in the ${figures.windowDays} day(s) to ${row.day}${asOf} (${share!.why}).`
        : `${row.domain} is no longer above its failure threshold for ${row.day}: ${figures.failedPercent}% of ${figures.messages} messages failed DMARC${asOf}.`;
      return { alertId, sentMembers: [], verdict, alert: { ...base, summary, figures, items: [] } };
    }
    case "tls_failure_share": {
      const share = await tlsFailureShareOf(trx, row.domain, row.day, rule.params);
      const verdict = share?.verdict ?? false;
      if (row.sent_verdict === null ? !verdict : row.sent_verdict === verdict) return null;
      const figures = share!.figures;
      const summary = verdict
        ? `${figures.failedSessionsPercent}% of the ${figures.sessions} SMTP TLS sessions to ${row.domain} failed on ${row.day}${asOf} (threshold ${figures.thresholdPercent}%).`
        : `The TLS failures of ${row.domain} on ${row.day} are no longer above the threshold: ${figures.failedSessionsPercent}% of ${figures.sessions} sessions${asOf}.`;
      return {
        alertId,
        sentMembers: [],
        verdict,
        alert: { ...base, summary, figures: { day: row.day, ...figures }, items: [] },
      };
    }
    case "tls_new_result": {
      const fresh = members.filter((member) => !sent.has(member.key));
      if (fresh.length === 0) return null;
      const items = await tlsResultFigures(
        trx,
        row.domain,
        row.day,
        fresh.map((member) => member.sender),
      );
      const failed = items.reduce((sum, item) => sum + item.failedSessions, 0);
      return {
        alertId,
        sentMembers: [...sent, ...fresh.map((member) => member.key)],
        verdict: true,
        alert: {
          ...base,
          summary: `TLS reports show ${fresh.length === 1 ? "a failure type" : `${fresh.length} failure types`} ${row.domain} had not had, on ${row.day}: ${listed(items.map((item) => item.resultType))} (${failed} failed sessions${asOf}).`,
          figures: { day: row.day, resultTypes: fresh.length, failedSessions: failed },
          items,
        },
      };
    }
    default:
      return null;
  }
}

/**
 * Each new sender's figures for the day, as the day's reports say now: every address of it that
 * sent for the domain that day (a service's other addresses included), as aggregate_by_sender
 * counts them.
 */
async function senderFigures(
  trx: Transaction<AlertsSchema>,
  domain: string,
  day: string,
  members: FindingMember[],
): Promise<{ sender: string; senderKind: string; addresses: number; messages: number; dmarcPass: number }[]> {
  const rows = await trx
    .selectFrom("alert_source_day")
    .select(["source_ip", "messages", "passed"])
    .where("domain", "=", domain)
    .where("day", "=", day)
    .execute();
  const names = await sendersOf(
    trx,
    rows.map((row) => row.source_ip),
  );
  const totals = new Map<string, { addresses: number; messages: number; dmarcPass: number }>();
  for (const row of rows) {
    const name = names.get(row.source_ip);
    for (const key of [`ip:${row.source_ip}`, ...(name ? [`sender:${name.sender}`] : [])]) {
      const total = totals.get(key) ?? { addresses: 0, messages: 0, dmarcPass: 0 };
      total.addresses += 1;
      total.messages += Number(row.messages);
      total.dmarcPass += Number(row.passed);
      totals.set(key, total);
    }
  }
  return members
    .map((member) => ({
      sender: member.sender,
      senderKind: member.kind,
      ...(totals.get(member.key) ?? { addresses: 0, messages: 0, dmarcPass: 0 }),
    }))
    .sort((a, b) => b.messages - a.messages || (a.sender < b.sender ? -1 : 1));
}

/** Names for a sentence: the first five, then how many more. */
function listed(names: string[]): string {
  if (names.length === 0) return "no one";
  const shown = names.slice(0, 5).join(", ");
  return names.length > 5 ? `${shown} and ${names.length - 5} more` : shown;
}

/**
 * backlog_skipped: once the evaluator has stopped skipping (nothing skipped for ten times
 * `settleMs`: an import pauses between its batches longer than a finding settles), one alert per
 * tenant says how many findings about days outside their rules' windows it did not raise.
 * Returns how many it raised.
 */
export async function noticeSkippedFindings(
  db: Kysely<AlertsSchema>,
  options: { now: Date; settleMs: number },
): Promise<number> {
  const tenants = await db
    .selectFrom("alert_skipped_finding")
    .select(["tenant_id"])
    .select((eb) => [
      eb.fn.countAll<string>().as("findings"),
      eb.fn.min("day").as("oldest"),
      eb.fn.max("day").as("newest"),
      eb.fn.max("recorded_at").as("last"),
    ])
    .where("noticed", "=", false)
    .groupBy("tenant_id")
    .execute();
  let raised = 0;
  for (const tenant of tenants) {
    const last = new Date(tenant.last);
    if (last.getTime() > options.now.getTime() - 10 * options.settleMs) continue;
    await db.transaction().execute(async (trx) => {
      const byRule = await trx
        .selectFrom("alert_skipped_finding")
        .select(["rule"])
        .select((eb) => eb.fn.countAll<string>().as("n"))
        .where("tenant_id", "=", tenant.tenant_id)
        .where("noticed", "=", false)
        .where("recorded_at", "<=", last)
        .groupBy("rule")
        .orderBy("rule")
        .execute();
      const findings = byRule.reduce((sum, entry) => sum + Number(entry.n), 0);
      if (findings === 0) return;
      const counts = byRule.map((entry) => `${entry.rule} ${entry.n}`).join(", ");
      const made = await raise(
        trx,
        {
          tenantId: tenant.tenant_id,
          rule: "backlog_skipped",
          domain: null,
          key: `skipped:${last.toISOString()}`,
          period: { start: `${tenant.oldest}T00:00:00.000Z`, end: `${tenant.newest}T23:59:59.999Z` },
          summary: `Reports of older days were imported: ${findings} finding(s) about report days from ${tenant.oldest} to ${tenant.newest}, outside their rules' windows, were not raised (${counts}). Their figures are in the reports' views.`,
          figures: { findings, oldestDay: tenant.oldest, newestDay: tenant.newest, byRule: counts },
          causedBy: [],
        },
        options.now,
      );
      if (made) raised++;
      await trx
        .updateTable("alert_skipped_finding")
        .set({ noticed: true })
        .where("tenant_id", "=", tenant.tenant_id)
        .where("noticed", "=", false)
        .where("recorded_at", "<=", last)
        .execute();
    });
  }
  return raised;
}
