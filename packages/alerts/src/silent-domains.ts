import type { Kysely } from "kysely";
import { raise } from "./alert-evaluator.js";
import { tenantRules } from "./rules.js";
import type { AlertsSchema } from "./schema.js";

/**
 * no_reports: a domain none of whose reports arrived for the tenant's number of days. One alert
 * per silence (keyed by the arrival of the last report), however often the check runs.
 * Returns how many alerts it raised.
 */
export async function checkSilentDomains(db: Kysely<AlertsSchema>, now: Date = new Date()): Promise<number> {
  const domains = await db
    .selectFrom("alert_domain_state as s")
    .innerJoin("alert_domain_owner as o", (join) =>
      join.onRef("o.domain", "=", "s.domain").onRef("o.tenant_id", "=", "s.tenant_id"),
    )
    .select(["s.domain", "s.tenant_id", "s.last_report_at", "s.last_stream", "s.last_position"])
    .execute();
  const daysByTenant = new Map<string, number | null>();
  let raised = 0;
  for (const row of domains) {
    if (!daysByTenant.has(row.tenant_id)) {
      const rule = (await tenantRules(db, row.tenant_id)).find((entry) => entry.rule === "no_reports")!;
      daysByTenant.set(row.tenant_id, rule.enabled ? rule.params.days! : null);
    }
    const days = daysByTenant.get(row.tenant_id);
    if (days == null) continue;
    const lastAt = new Date(row.last_report_at);
    if (now.getTime() - lastAt.getTime() < days * 86_400_000) continue;
    const quiet = await raise(
      db,
      {
        tenantId: row.tenant_id,
        rule: "no_reports",
        domain: row.domain,
        key: `since:${lastAt.toISOString()}`,
        period: { start: lastAt.toISOString(), end: now.toISOString() },
        summary: `No report has arrived for ${row.domain} since ${lastAt.toISOString()} (${days} day(s) or more).`,
        figures: { lastReportAt: lastAt.toISOString(), days },
        causedBy: [{ stream: row.last_stream, position: row.last_position }],
      },
      now,
    );
    if (quiet) raised++;
  }
  return raised;
}
