import type { Kysely } from "kysely";
import { raise } from "./alert-evaluator.js";
import type { AlertsSchema } from "./schema.js";

/** What the watch needs of the onboarding check (packages/onboarding's DomainStatus). */
export interface DnsStatus {
  dmarc: { record: string | null };
  spf: { record: string | null };
  problems: { code: string; message: string }[];
}

export type DnsStatusChecker = (domain: string) => Promise<DnsStatus>;

/**
 * The periodic check of every owned domain from live DNS: dns_record_changed when its DMARC or
 * SPF record differs from the last check's, onboarding_bad when the check has problems the last
 * one did not. The first check of a domain is its baseline. The alert and the new state are
 * written in one transaction, so a change raises one alert. A check that fails (DNS down) changes
 * nothing. Returns how many alerts it raised.
 */
export async function checkDomainsDns(
  db: Kysely<AlertsSchema>,
  check: DnsStatusChecker,
  now: Date = new Date(),
): Promise<number> {
  const domains = await db.selectFrom("alert_domain_owner").selectAll().orderBy("domain").execute();
  let raised = 0;
  for (const { domain, tenant_id: tenantId } of domains) {
    let status: DnsStatus;
    try {
      status = await check(domain);
    } catch {
      continue;
    }
    const problems = status.problems.map((problem) => problem.code).sort();
    await db.transaction().execute(async (trx) => {
      const before = await trx
        .selectFrom("alert_dns_state")
        .selectAll()
        .where("domain", "=", domain)
        .forUpdate()
        .executeTakeFirst();
      const row = {
        tenant_id: tenantId,
        dmarc_record: status.dmarc.record,
        spf_record: status.spf.record,
        problems: JSON.stringify(problems),
        checked_at: now,
      };
      if (!before || before.tenant_id !== tenantId) {
        await trx
          .insertInto("alert_dns_state")
          .values({ domain, ...row })
          .onConflict((oc) => oc.column("domain").doUpdateSet(row))
          .execute();
        return;
      }
      const at = now.toISOString();
      const period = { start: new Date(before.checked_at).toISOString(), end: at };
      if (before.dmarc_record !== status.dmarc.record || before.spf_record !== status.spf.record) {
        const changed = [
          ...(before.dmarc_record !== status.dmarc.record ? ["DMARC"] : []),
          ...(before.spf_record !== status.spf.record ? ["SPF"] : []),
        ];
        if (
          await raise(
            trx,
            {
              tenantId,
              rule: "dns_record_changed",
              domain,
              key: `checked:${at}`,
              period,
              summary: `The published ${changed.join(" and ")} record of ${domain} changed.`,
              figures: {
                dmarcBefore: before.dmarc_record,
                dmarcNow: status.dmarc.record,
                spfBefore: before.spf_record,
                spfNow: status.spf.record,
              },
              causedBy: [],
            },
            now,
          )
        )
          raised++;
      }
      const known = new Set(JSON.parse(before.problems) as string[]);
      const fresh = status.problems.filter((problem) => !known.has(problem.code));
      if (fresh.length > 0) {
        if (
          await raise(
            trx,
            {
              tenantId,
              rule: "onboarding_bad",
              domain,
              key: `checked:${at}`,
              period,
              summary: `The DNS check of ${domain} found: ${fresh.map((problem) => problem.message).join(" ")}`,
              figures: { problems: fresh.map((problem) => problem.code).join(" ") },
              causedBy: [],
            },
            now,
          )
        )
          raised++;
      }
      await trx.updateTable("alert_dns_state").set(row).where("domain", "=", domain).execute();
    });
  }
  return raised;
}
