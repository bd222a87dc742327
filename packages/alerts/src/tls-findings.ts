import { spreadOverDays } from "@dmarc-ledger/dmarc-reports/spread-over-days";
import type { AlertRaised, TlsReportReceived } from "@dmarc-ledger/events";
import { sql, type Transaction } from "kysely";
import { outsideWindow, recordFinding } from "./findings.js";
import { tenantRule } from "./rules.js";
import type { AlertsSchema } from "./schema.js";

type Trx = Transaction<AlertsSchema>;
type Cause = AlertRaised["causedBy"];

const utcDay = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);

/**
 * A TLS report's sessions for the alerts: counted per tenant's domain and day as the read models
 * count them (spread over the days of a report longer than one), and its findings recorded:
 * tls_failure_share for each day it touches, tls_new_result for failure result types the domain
 * had not had (on the report's first day).
 */
export async function tlsReport(
  trx: Trx,
  report: TlsReportReceived,
  ownerOf: (domain: string) => Promise<{ domain: string; tenantId: string } | null>,
  options: { raising: boolean; now: Date; recordedAt: Date; cause: Cause },
): Promise<void> {
  const rows = new Map<
    string,
    { domain: string; day: string; resultType: string; successful: number; failed: number }
  >();
  const add = (domain: string, day: string, resultType: string, successful: number, failed: number) => {
    const key = `${domain} ${day} ${resultType}`;
    const row = rows.get(key) ?? { domain, day, resultType, successful: 0, failed: 0 };
    row.successful += successful;
    row.failed += failed;
    rows.set(key, row);
  };
  const owners = new Map<string, { domain: string; tenantId: string }>();
  const resultsByDomain = new Map<string, Set<string>>();
  for (const policy of report.policies) {
    if (policy.policyDomain === "") continue;
    const owner = await ownerOf(policy.policyDomain);
    if (!owner) continue;
    owners.set(owner.domain, owner);
    for (const part of spreadOverDays(report.begin, report.end, policy.successfulSessions))
      add(owner.domain, utcDay(part.t), "", part.count, 0);
    for (const part of spreadOverDays(report.begin, report.end, policy.failedSessions))
      add(owner.domain, utcDay(part.t), "", 0, part.count);
    for (const failure of policy.failures) {
      const results = resultsByDomain.get(owner.domain) ?? new Set<string>();
      results.add(failure.resultType);
      resultsByDomain.set(owner.domain, results);
      for (const part of spreadOverDays(report.begin, report.end, failure.failedSessions))
        add(owner.domain, utcDay(part.t), failure.resultType, 0, part.count);
    }
  }
  if (rows.size === 0) return;
  const values = [...rows.values()].map((row) => ({
    domain: row.domain,
    day: row.day,
    result_type: row.resultType,
    successful: row.successful,
    failed: row.failed,
  }));
  for (let at = 0; at < values.length; at += 1000) {
    await trx
      .insertInto("alert_tls_day")
      .values(values.slice(at, at + 1000))
      .onConflict((oc) =>
        oc.columns(["domain", "day", "result_type"]).doUpdateSet({
          successful: sql`alert_tls_day.successful + excluded.successful`,
          failed: sql`alert_tls_day.failed + excluded.failed`,
        }),
      )
      .execute();
  }
  const day = utcDay(report.begin);
  for (const [domain, results] of resultsByDomain) {
    const owner = owners.get(domain)!;
    const known = await trx
      .selectFrom("alert_tls_known_result")
      .select("result_type")
      .where("domain", "=", domain)
      .where("result_type", "in", [...results])
      .execute();
    const fresh = [...results].filter((result) => !known.some((row) => row.result_type === result));
    if (fresh.length === 0) continue;
    await trx
      .insertInto("alert_tls_known_result")
      .values(fresh.map((result) => ({ domain, result_type: result, first_seen: options.recordedAt })))
      .onConflict((oc) => oc.columns(["domain", "result_type"]).doNothing())
      .execute();
    if (!options.raising) continue;
    await recordFinding(
      trx,
      {
        tenantId: owner.tenantId,
        rule: "tls_new_result",
        domain,
        day,
        members: fresh.map((result) => ({
          key: `result:${result}`,
          sender: result,
          kind: "tls_result",
          sourceIp: "",
          reporter: report.organization,
        })),
        cause: options.cause,
      },
      options.now,
    );
  }
  if (!options.raising) return;
  const days = new Map<string, { domain: string; tenantId: string; day: string }>();
  for (const row of rows.values()) {
    const owner = owners.get(row.domain)!;
    days.set(`${row.domain} ${row.day}`, { domain: row.domain, tenantId: owner.tenantId, day: row.day });
  }
  for (const { domain, tenantId, day: partDay } of days.values()) {
    const rule = await tenantRule(trx, tenantId, "tls_failure_share");
    if (!rule.enabled) continue;
    const skippable = outsideWindow(partDay, rule, options.now)
      ? ((await tlsFailureShareOf(trx, domain, partDay, rule.params))?.verdict ?? false)
      : true;
    await recordFinding(
      trx,
      {
        tenantId,
        rule: "tls_failure_share",
        domain,
        day: partDay,
        members: [],
        cause: options.cause,
        skippable,
      },
      options.now,
    );
  }
}

export interface TlsFailureShare {
  verdict: boolean;
  figures: {
    sessions: number;
    successfulSessions: number;
    failedSessions: number;
    failedSessionsPercent: number;
    thresholdPercent: number;
  };
}

/** A domain's TLS sessions of a day, and whether their failed share is above the threshold. */
export async function tlsFailureShareOf(
  handle: Trx,
  domain: string,
  day: string,
  params: Record<string, number>,
): Promise<TlsFailureShare | null> {
  const row = await handle
    .selectFrom("alert_tls_day")
    .select(["successful", "failed"])
    .where("domain", "=", domain)
    .where("day", "=", day)
    .where("result_type", "=", "")
    .executeTakeFirst();
  if (!row) return null;
  const successful = Number(row.successful);
  const failed = Number(row.failed);
  const sessions = successful + failed;
  if (sessions < params.min_sessions!) return null;
  return {
    verdict: failed * 100 > params.threshold_percent! * sessions,
    figures: {
      sessions,
      successfulSessions: successful,
      failedSessions: failed,
      failedSessionsPercent: Math.round((failed * 10_000) / sessions) / 100,
      thresholdPercent: params.threshold_percent!,
    },
  };
}

/** The failed sessions of each of a domain's result types on a day. */
export async function tlsResultFigures(
  handle: Trx,
  domain: string,
  day: string,
  results: string[],
): Promise<{ resultType: string; failedSessions: number }[]> {
  const rows = await handle
    .selectFrom("alert_tls_day")
    .select(["result_type", "failed"])
    .where("domain", "=", domain)
    .where("day", "=", day)
    .where("result_type", "in", results.length > 0 ? results : [""])
    .execute();
  const failed = new Map(rows.map((row) => [row.result_type, Number(row.failed)]));
  return results
    .map((resultType) => ({ resultType, failedSessions: failed.get(resultType) ?? 0 }))
    .sort((a, b) => b.failedSessions - a.failedSessions || (a.resultType < b.resultType ? -1 : 1));
}
