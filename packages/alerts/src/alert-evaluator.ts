import { spreadOverDays } from "@dmarc-ledger/dmarc-reports/spread-over-days";
import type {
  AggregateReportReceived,
  AlertRaised,
  AlertRuleKind,
  DomainEvent,
  ForensicReportReceived,
} from "@dmarc-ledger/events";
import type { Projection } from "@dmarc-ledger/projection-engine";
import { sql, type Transaction } from "kysely";
import { alertIdOf } from "./alert-id.js";
import { failureShareOf } from "./failure-share.js";
import { countSkipped, outsideWindow, recordFinding } from "./findings.js";
import { type NewSource, newSources, sourceNamedForNewSenders } from "./new-senders.js";
import { tenantRule } from "./rules.js";
import type { AlertsSchema } from "./schema.js";
import { sendersOf } from "./sender-names.js";
import { tlsReport } from "./tls-findings.js";
import { sourceNamed, unapprovedSenders } from "./unapproved-senders.js";

export interface EvaluatorOptions {
  /**
   * Events recorded longer ago than this build the evaluator's state but raise nothing: a first
   * start over a long history (or an evaluator that was off for weeks) does not send the past.
   */
  maxEventAgeMs: number;
  /** ALERT_NAME_WAIT: how long a new source IP waits for its name (new-senders.ts); 0 by default. */
  nameWaitMs?: number;
  now?: () => Date;
}

type Trx = Transaction<AlertsSchema>;

/** The evaluator's checkpoint row in projection_checkpoint. */
export const evaluatorName = "alert_evaluator";

/**
 * Decides alerts from the events, in their order. It is run like a projection (its state, the
 * alerts it decides and its checkpoint commit in one transaction, so a crash never decides a batch
 * twice or half) but by a projector of its own, not in allProjections: a replay of the read models
 * does not run it again. What it decides goes to alert_outbox under a deterministic id (alert-id.ts);
 * the publisher records it as an AlertRaised event and fans it out (publisher.ts).
 */
export function alertEvaluator(options: EvaluatorOptions): Projection<AlertsSchema> {
  const now = options.now ?? (() => new Date());
  return {
    name: evaluatorName,
    tables: [
      "alert_domain_owner",
      "alert_domain_state",
      "alert_known_sender",
      "alert_domain_day",
      "alert_safe_spf",
      "alert_source_name",
      "alert_sender_approval",
      "alert_sender_day",
      "alert_unnamed_failing",
      "alert_known_name",
      "alert_unnamed_new",
      "alert_finding",
      "alert_skipped_finding",
      "alert_source_day",
      "alert_tls_day",
      "alert_tls_known_result",
      "alert_outbox",
      "alert_email",
      "alert_digest",
    ],
    handles: new Set([
      "DomainAdded",
      "DomainRemoved",
      "AggregateReportReceived",
      "ForensicReportReceived",
      "TlsReportReceived",
      "SafeSpfRecordComputed",
      "SafeSpfComputationFailed",
      "SourceIpResolved",
      "SenderApprovalSet",
      "TenantErased",
      "UserErased",
    ]),
    async apply(trx, events) {
      const at = now();
      const context = {
        oldest: new Date(at.getTime() - options.maxEventAgeMs),
        now: at,
        nameWaitMs: options.nameWaitMs ?? 0,
      };
      for (const event of events) {
        const raising = event.recordedAt >= context.oldest;
        await evaluate(trx, event, raising, context);
      }
    },
  };
}

interface Context {
  oldest: Date;
  now: Date;
  nameWaitMs: number;
}

async function evaluate(trx: Trx, event: DomainEvent, raising: boolean, context: Context): Promise<void> {
  const cause = [{ stream: event.stream, position: event.position.toString() }];
  switch (event.type) {
    case "DomainAdded":
      await forgetDomain(trx, event.data.domain);
      await trx
        .insertInto("alert_domain_owner")
        .values({ domain: event.data.domain, tenant_id: event.data.tenantId })
        .onConflict((oc) => oc.column("domain").doUpdateSet({ tenant_id: event.data.tenantId }))
        .execute();
      return;
    case "DomainRemoved":
      await forgetDomain(trx, event.data.domain);
      return;
    case "UserErased":
      // An erased person's address goes from the mail outboxes too.
      await trx.deleteFrom("alert_email").where("user_id", "=", event.data.userId).execute();
      await trx.deleteFrom("alert_digest").where("user_id", "=", event.data.userId).execute();
      return;
    case "TenantErased":
      // The people's addresses the mail outboxes hold go with the tenant's other personal data.
      await trx.deleteFrom("alert_email").where("tenant_id", "=", event.data.tenantId).execute();
      await trx.deleteFrom("alert_digest").where("tenant_id", "=", event.data.tenantId).execute();
      return;
    case "AggregateReportReceived":
      return aggregateReport(trx, event.data, event.recordedAt, event.position, cause, raising, context);
    case "SourceIpResolved": {
      await sourceNamed(trx, event.data, cause, context.oldest, context.now);
      const name = (await sendersOf(trx, [event.data.ip])).get(event.data.ip)!;
      await sourceNamedForNewSenders(trx, event.data.ip, name, cause, context.oldest, context.now);
      return;
    }
    case "SenderApprovalSet": {
      const { domain, service, range, approved } = event.data;
      const kind = service !== null ? "service" : "range";
      const sender = service ?? range ?? "";
      if (approved === null) {
        await trx
          .deleteFrom("alert_sender_approval")
          .where("domain", "=", domain)
          .where("kind", "=", kind)
          .where("sender", "=", sender)
          .execute();
      } else {
        await trx
          .insertInto("alert_sender_approval")
          .values({ domain, kind, sender, approved })
          .onConflict((oc) => oc.columns(["domain", "kind", "sender"]).doUpdateSet({ approved }))
          .execute();
      }
      return;
    }
    case "ForensicReportReceived":
      return failureReport(trx, event.data, event.recordedAt, cause, raising, context.now);
    case "TlsReportReceived":
      return tlsReport(trx, event.data, (domain) => ownerOf(trx, domain), {
        raising,
        now: context.now,
        recordedAt: event.recordedAt,
        cause,
      });
    case "SafeSpfRecordComputed": {
      const { domain, tenantId } = event.data;
      if (!(await owns(trx, tenantId, domain))) return;
      const day = utcDay(event.recordedAt);
      if (raising && event.data.lookupsBefore > 10) {
        await raise(trx, {
          tenantId,
          rule: "spf_lookup_limit",
          domain,
          key: `original:${event.data.original}`,
          period: dayPeriod(day),
          summary: `The SPF record of ${domain} needs ${event.data.lookupsBefore} DNS lookups; SPF allows 10.`,
          figures: {
            lookups: event.data.lookupsBefore,
            lookupsWithSafeSpf: event.data.lookupsAfter,
            original: event.data.original,
          },
          causedBy: cause,
        });
      }
      const records = JSON.stringify(event.data.records);
      const before = await trx
        .selectFrom("alert_safe_spf")
        .select("records")
        .where("domain", "=", domain)
        .executeTakeFirst();
      if (before && before.records !== records && raising) {
        await raise(trx, {
          tenantId,
          rule: "safe_spf_changed",
          domain,
          key: `position:${event.position}`,
          period: dayPeriod(day),
          summary: `Safe SPF of ${domain} was computed again with a different result (+${event.data.added.length} / -${event.data.removed.length} networks).`,
          figures: {
            added: event.data.added.join(" "),
            removed: event.data.removed.join(" "),
            lookupsBefore: event.data.lookupsBefore,
            lookupsAfter: event.data.lookupsAfter,
          },
          causedBy: cause,
        });
      }
      await trx
        .insertInto("alert_safe_spf")
        .values({ domain, records })
        .onConflict((oc) => oc.column("domain").doUpdateSet({ records }))
        .execute();
      return;
    }
    case "SafeSpfComputationFailed": {
      const { domain, tenantId } = event.data;
      if (!raising || !(await owns(trx, tenantId, domain))) return;
      const day = utcDay(event.recordedAt);
      // One a day: a refresh that keeps failing is retried often.
      await raise(trx, {
        tenantId,
        rule: "safe_spf_failed",
        domain,
        key: `day:${day}`,
        period: dayPeriod(day),
        summary: `Safe SPF of ${domain} could not be computed: ${event.data.message}`,
        figures: { code: event.data.code, message: event.data.message, retrying: event.data.retrying },
        causedBy: cause,
      });
      return;
    }
    default:
      return;
  }
}

async function forgetDomain(trx: Trx, domain: string): Promise<void> {
  await trx.deleteFrom("alert_domain_owner").where("domain", "=", domain).execute();
  await trx.deleteFrom("alert_domain_state").where("domain", "=", domain).execute();
  await trx.deleteFrom("alert_known_sender").where("domain", "=", domain).execute();
  await trx.deleteFrom("alert_domain_day").where("domain", "=", domain).execute();
  await trx.deleteFrom("alert_safe_spf").where("domain", "=", domain).execute();
  await trx.deleteFrom("alert_sender_approval").where("domain", "=", domain).execute();
  await trx.deleteFrom("alert_sender_day").where("domain", "=", domain).execute();
  await trx.deleteFrom("alert_unnamed_failing").where("domain", "=", domain).execute();
  await trx.deleteFrom("alert_known_name").where("domain", "=", domain).execute();
  await trx.deleteFrom("alert_unnamed_new").where("domain", "=", domain).execute();
  await trx.deleteFrom("alert_finding").where("domain", "=", domain).execute();
  await trx.deleteFrom("alert_skipped_finding").where("domain", "=", domain).execute();
  await trx.deleteFrom("alert_source_day").where("domain", "=", domain).execute();
  await trx.deleteFrom("alert_tls_day").where("domain", "=", domain).execute();
  await trx.deleteFrom("alert_tls_known_result").where("domain", "=", domain).execute();
}

async function owns(trx: Trx, tenantId: string, domain: string): Promise<boolean> {
  const row = await trx
    .selectFrom("alert_domain_owner")
    .select("tenant_id")
    .where("domain", "=", domain)
    .executeTakeFirst();
  return row?.tenant_id === tenantId;
}

/** The tenant's domain a report domain counts for: itself or its nearest owned parent. */
async function ownerOf(trx: Trx, reportDomain: string): Promise<{ domain: string; tenantId: string } | null> {
  const name = reportDomain.toLowerCase().replace(/\.$/, "");
  const suffixes: string[] = [];
  for (let at = 0; at !== -1; at = name.indexOf(".", at) + 1 || -1) suffixes.push(name.slice(at));
  if (suffixes.length === 0) return null;
  const rows = await trx
    .selectFrom("alert_domain_owner")
    .select(["domain", "tenant_id"])
    .where("domain", "in", suffixes)
    .execute();
  const best = rows.sort((a, b) => b.domain.length - a.domain.length)[0];
  return best ? { domain: best.domain, tenantId: best.tenant_id } : null;
}

const dmarcPass = (row: { policyDkim: string; policySpf: string }) =>
  row.policyDkim === "pass" || row.policySpf === "pass";

async function aggregateReport(
  trx: Trx,
  report: AggregateReportReceived,
  recordedAt: Date,
  position: bigint,
  cause: AlertRaised["causedBy"],
  raising: boolean,
  context: Context,
): Promise<void> {
  const owner = await ownerOf(trx, report.policy.domain);
  if (!owner) return;
  const { domain, tenantId } = owner;
  const end = new Date(report.end * 1000);
  const period = { start: new Date(report.begin * 1000).toISOString(), end: end.toISOString() };

  const state = await trx
    .selectFrom("alert_domain_state")
    .selectAll()
    .where("domain", "=", domain)
    .executeTakeFirst();
  const baseline = !state || state.first_report === report.identity;
  if (!state) {
    await trx
      .insertInto("alert_domain_state")
      .values({
        domain,
        tenant_id: tenantId,
        first_report: report.identity,
        last_report_end: end,
        last_report_at: recordedAt,
        last_stream: cause[0]!.stream,
        last_position: position.toString(),
      })
      .execute();
  } else {
    await trx
      .updateTable("alert_domain_state")
      .set({
        last_report_end: end > state.last_report_end ? end : state.last_report_end,
        last_report_at: recordedAt,
        last_stream: cause[0]!.stream,
        last_position: position.toString(),
      })
      .where("domain", "=", domain)
      .execute();
  }

  // New senders.
  const bySource = new Map<string, { messages: number; passed: number }>();
  for (const row of report.rows) {
    const entry = bySource.get(row.sourceIp) ?? { messages: 0, passed: 0 };
    entry.messages += row.count;
    if (dmarcPass(row)) entry.passed += row.count;
    bySource.set(row.sourceIp, entry);
  }
  const day = utcDay(new Date(report.begin * 1000));
  // The figures per day as the read models count them: a report longer than a day spread over
  // the days it covers (spreadOverDays), so that an alert's figures are the API's for its day.
  const perDay = new Map<string, { messages: number; failed: number }>();
  const perSourceDay = new Map<string, { day: string; ip: string; messages: number; passed: number }>();
  for (const row of report.rows) {
    const passes = dmarcPass(row);
    for (const part of spreadOverDays(report.begin, report.end, row.count)) {
      const partDay = utcDay(new Date(part.t * 1000));
      const dayTotal = perDay.get(partDay) ?? { messages: 0, failed: 0 };
      dayTotal.messages += part.count;
      if (!passes) dayTotal.failed += part.count;
      perDay.set(partDay, dayTotal);
      const key = `${partDay} ${row.sourceIp}`;
      const sourceTotal = perSourceDay.get(key) ?? { day: partDay, ip: row.sourceIp, messages: 0, passed: 0 };
      sourceTotal.messages += part.count;
      if (passes) sourceTotal.passed += part.count;
      perSourceDay.set(key, sourceTotal);
    }
  }
  const perSource = [...perSourceDay.values()].map((total) => ({
    domain,
    day: total.day,
    source_ip: total.ip,
    messages: total.messages,
    passed: total.passed,
  }));
  for (let at = 0; at < perSource.length; at += 1000) {
    await trx
      .insertInto("alert_source_day")
      .values(perSource.slice(at, at + 1000))
      .onConflict((oc) =>
        oc.columns(["domain", "day", "source_ip"]).doUpdateSet({
          messages: sql`alert_source_day.messages + excluded.messages`,
          passed: sql`alert_source_day.passed + excluded.passed`,
        }),
      )
      .execute();
  }
  const ips = [...bySource.keys()];
  const known = new Set<string>();
  for (let at = 0; at < ips.length; at += 1000) {
    const rows = await trx
      .selectFrom("alert_known_sender")
      .select("source_ip")
      .where("domain", "=", domain)
      .where("source_ip", "in", ips.slice(at, at + 1000))
      .execute();
    for (const row of rows) known.add(row.source_ip);
  }
  const fresh = ips.filter((ip) => !known.has(ip));
  for (let at = 0; at < fresh.length; at += 1000) {
    await trx
      .insertInto("alert_known_sender")
      .values(fresh.slice(at, at + 1000).map((ip) => ({ domain, source_ip: ip, first_seen: recordedAt })))
      .onConflict((oc) => oc.columns(["domain", "source_ip"]).doNothing())
      .execute();
  }
  if (fresh.length > 0) {
    const newSenderRule = await tenantRule(trx, tenantId, "new_sender");
    const enabled = newSenderRule.enabled;
    // A day outside the window is counted now, not after the names it would wait for: a backlog's
    // skipping ends with its import, and backlog_skipped says so once.
    const skipped = raising && enabled && !baseline && outsideWindow(day, newSenderRule, context.now);
    if (skipped) {
      await recordFinding(
        trx,
        { tenantId, rule: "new_sender", domain, day, members: [], cause },
        context.now,
      );
    }
    const sources: NewSource[] = fresh.map((ip) => ({
      domain,
      tenantId,
      sourceIp: ip,
      period,
      figures: {
        messages: bySource.get(ip)!.messages,
        dmarcPass: bySource.get(ip)!.passed,
        reportDomain: report.policy.domain,
        // An organisation may send its reports with no name: its address says who it is.
        reporter: report.orgName || report.email,
        reportId: report.reportId,
      },
    }));
    await newSources(trx, sources, {
      baseline,
      raising: raising && enabled && !skipped,
      nameWaitMs: context.nameWaitMs,
      recordedAt,
      now: context.now,
      cause,
    });
  }

  // Read only when raising: a long history's events build state without it.
  const unapprovedRule = raising ? await tenantRule(trx, tenantId, "unapproved_sender") : null;
  if (unapprovedRule?.enabled) {
    const failedByIp = new Map<string, number>();
    for (const [ip, figures] of bySource) {
      if (figures.messages > figures.passed) failedByIp.set(ip, figures.messages - figures.passed);
    }
    // Counted at once for a day outside the window, as new senders are.
    if (outsideWindow(day, unapprovedRule, context.now)) {
      if (failedByIp.size > 0)
        await recordFinding(
          trx,
          { tenantId, rule: "unapproved_sender", domain, day, members: [], cause },
          context.now,
        );
    } else
      await unapprovedSenders(
        trx,
        { domain, tenantId, day, failedByIp, recordedAt, cause },
        context.oldest,
        context.now,
      );
  }

  // A report's last chunk may hold no rows, and has nothing to count or decide.
  if (perDay.size === 0) return;
  // The failure share of the window ending on the report's day, decided when the finding is sent
  // (findings.ts) with the day's figures as they are then.
  await trx
    .insertInto("alert_domain_day")
    .values([...perDay].map(([partDay, total]) => ({ domain, day: partDay, ...total })))
    .onConflict((oc) =>
      oc.columns(["domain", "day"]).doUpdateSet({
        messages: sql`alert_domain_day.messages + excluded.messages`,
        failed: sql`alert_domain_day.failed + excluded.failed`,
      }),
    )
    .execute();
  if (!raising) return;
  const rule = await tenantRule(trx, tenantId, "dmarc_failure_share");
  if (!rule.enabled) return;
  for (const partDay of perDay.keys()) {
    // Outside the window, a day counts as skipped only when it met the rule.
    const skippable = outsideWindow(partDay, rule, context.now)
      ? ((await failureShareOf(trx, domain, partDay, rule))?.verdict ?? false)
      : true;
    await recordFinding(
      trx,
      { tenantId, rule: "dmarc_failure_share", domain, day: partDay, members: [], cause, skippable },
      context.now,
    );
  }
}

async function failureReport(
  trx: Trx,
  report: ForensicReportReceived,
  recordedAt: Date,
  cause: AlertRaised["causedBy"],
  raising: boolean,
  now: Date,
): Promise<void> {
  if (!raising) return;
  const owner = await ownerOf(trx, report.reportedDomain);
  if (!owner) return;
  const at = (
    report.arrivalDate && !Number.isNaN(Date.parse(report.arrivalDate))
      ? new Date(report.arrivalDate)
      : recordedAt
  ).toISOString();
  // An old failure report (a backlog's) is counted, as the report days of the other rules are.
  const rule = await tenantRule(trx, owner.tenantId, "failure_report");
  if (rule.enabled && outsideWindow(at.slice(0, 10), rule, now)) {
    await countSkipped(
      trx,
      { tenantId: owner.tenantId, rule: "failure_report", domain: owner.domain, day: at.slice(0, 10) },
      now,
    );
    return;
  }
  await raise(trx, {
    tenantId: owner.tenantId,
    rule: "failure_report",
    domain: owner.domain,
    key: `report:${report.identity}`,
    period: { start: at, end: at },
    // Its personal fields (source, addresses, subject) stay sealed in the event: an alert goes to
    // webhooks and mail, which retention and erasure cannot reach; GET forensic shows them.
    summary: `A failure report for ${report.reportedDomain}: ${report.authFailure ?? "authentication failure"}, ${report.incidents} incident(s).`,
    figures: {
      reportedDomain: report.reportedDomain,
      authFailure: report.authFailure,
      feedbackType: report.feedbackType,
      deliveryResult: report.deliveryResult,
      incidents: report.incidents,
    },
    causedBy: cause,
  });
}

export interface AlertDecision {
  tenantId: string;
  rule: AlertRuleKind;
  domain: string | null;
  key: string;
  period: { start: string; end: string };
  summary: string;
  figures: AlertRaised["figures"];
  items?: AlertRaised["items"];
  soFar?: boolean;
  revises?: string | null;
  causedBy: AlertRaised["causedBy"];
}

/**
 * Puts a decided alert in the outbox, unless its rule is off for the tenant; the same alert decided
 * again is the same row. Returns whether it was new.
 */
export async function raise(
  handle: Trx | import("kysely").Kysely<AlertsSchema>,
  decision: AlertDecision,
  at: Date = new Date(),
): Promise<boolean> {
  const rule = await tenantRule(handle, decision.tenantId, decision.rule);
  if (!rule.enabled) return false;
  const alertId = alertIdOf(decision.tenantId, decision.rule, decision.domain, decision.key);
  const alert: AlertRaised = {
    alertId,
    tenantId: decision.tenantId,
    rule: decision.rule,
    domain: decision.domain,
    period: { ...decision.period, key: decision.key },
    summary: decision.summary,
    figures: decision.figures,
    items: decision.items ?? [],
    soFar: decision.soFar ?? false,
    revises: decision.revises ?? null,
    causedBy: decision.causedBy,
  };
  const inserted = await handle
    .insertInto("alert_outbox")
    .values({
      alert_id: alertId,
      payload: JSON.stringify(alert),
      published: false,
      after_position: decision.causedBy
        .reduce((newest, cause) => (BigInt(cause.position) > newest ? BigInt(cause.position) : newest), 0n)
        .toString(),
      created_at: at,
    })
    .onConflict((oc) => oc.column("alert_id").doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0;
}

function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function dayPeriod(day: string): { start: string; end: string } {
  return { start: `${day}T00:00:00.000Z`, end: `${day}T23:59:59.999Z` };
}
