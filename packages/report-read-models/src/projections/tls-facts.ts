import { spreadOverDays } from "@dmarc-ledger/dmarc-reports";
import type { DomainEvent, TlsReportReceived } from "@dmarc-ledger/events";
import type { Projection } from "@dmarc-ledger/projection-engine";
import { sql } from "kysely";
import type { ReportSchema } from "../schema.js";

/** Keys per statement: bounds the statement's size (each column goes as one array). */
const keysPerStatement = 10_000;

interface PolicySums {
  domain: string;
  policyType: string;
  t: number;
  reports: number;
  successful: number;
  failed: number;
}

interface FailureSums {
  key: readonly [string, string, string, string, string, string, string];
  t: number;
  failed: number;
}

/**
 * An SMTP TLS report's sessions at the time they count: its start when it covers at most 24
 * hours, else spread over its UTC days in proportion to their seconds (spreadOverDays, as the
 * aggregate reports' messages). A report counts once, at its start.
 */
function addPolicies(report: TlsReportReceived, sums: Map<string, PolicySums>): void {
  for (const policy of report.policies) {
    if (policy.policyDomain === "") continue;
    const at = (t: number) => {
      const id = `${policy.policyDomain}\u0000${policy.policyType}\u0000${t}`;
      let entry = sums.get(id);
      if (!entry) {
        entry = {
          domain: policy.policyDomain,
          policyType: policy.policyType,
          t,
          reports: 0,
          successful: 0,
          failed: 0,
        };
        sums.set(id, entry);
      }
      return entry;
    };
    at(report.begin).reports += 1;
    for (const part of spreadOverDays(report.begin, report.end, policy.successfulSessions))
      at(part.t).successful += part.count;
    for (const part of spreadOverDays(report.begin, report.end, policy.failedSessions))
      at(part.t).failed += part.count;
  }
}

function addFailures(report: TlsReportReceived, sums: Map<string, FailureSums>): void {
  for (const policy of report.policies) {
    if (policy.policyDomain === "") continue;
    for (const failure of policy.failures) {
      const key = [
        policy.policyDomain,
        policy.policyType,
        failure.resultType,
        failure.sendingMtaIp ?? "",
        failure.receivingMxHostname ?? "",
        failure.receivingIp ?? "",
        report.organization,
      ] as const;
      for (const part of spreadOverDays(report.begin, report.end, failure.failedSessions)) {
        if (part.count === 0) continue;
        const id = `${key.join("\u0000")}\u0000${part.t}`;
        const entry = sums.get(id);
        if (entry) entry.failed += part.count;
        else sums.set(id, { key, t: part.t, failed: part.count });
      }
    }
  }
}

function* tlsReports(events: readonly DomainEvent[]): Generator<TlsReportReceived> {
  for (const event of events) if (event.type === "TlsReportReceived") yield event.data;
}

/**
 * SMTP TLS reports (RFC 8460) summed for GET tls_by_domain, tls_by_date (tls_policy_fact) and
 * tls_failures (tls_failure_fact). Sums only add, so any batching of the events gives the same rows.
 */
export const tlsFactsProjection: Projection<ReportSchema> = {
  name: "tls_facts",
  tables: ["tls_policy_fact", "tls_failure_fact"],
  handles: new Set(["TlsReportReceived"]),
  async apply(trx, events) {
    const policies = new Map<string, PolicySums>();
    const failures = new Map<string, FailureSums>();
    for (const report of tlsReports(events)) {
      addPolicies(report, policies);
      addFailures(report, failures);
    }
    const policyRows = [...policies.values()];
    for (let start = 0; start < policyRows.length; start += keysPerStatement) {
      const slice = policyRows.slice(start, start + keysPerStatement);
      await sql`insert into tls_policy_fact (domain, policy_type, t, reports, successful, failed)
        select * from unnest(${slice.map((row) => row.domain)}::text[],
          ${slice.map((row) => row.policyType)}::text[], ${slice.map((row) => row.t)}::bigint[],
          ${slice.map((row) => row.reports)}::bigint[], ${slice.map((row) => row.successful)}::bigint[],
          ${slice.map((row) => row.failed)}::bigint[])
        on conflict (domain, policy_type, t) do update set
          reports = tls_policy_fact.reports + excluded.reports,
          successful = tls_policy_fact.successful + excluded.successful,
          failed = tls_policy_fact.failed + excluded.failed`.execute(trx);
    }
    const failureRows = [...failures.values()];
    for (let start = 0; start < failureRows.length; start += keysPerStatement) {
      const slice = failureRows.slice(start, start + keysPerStatement);
      const column = (index: number) => sql`${slice.map((row) => row.key[index]!)}::text[]`;
      await sql`insert into tls_failure_fact (domain, policy_type, result_type, sending_mta_ip,
          receiving_mx_hostname, receiving_ip, organization, t, failed)
        select * from unnest(${column(0)}, ${column(1)}, ${column(2)}, ${column(3)}, ${column(4)},
          ${column(5)}, ${column(6)}, ${slice.map((row) => row.t)}::bigint[],
          ${slice.map((row) => row.failed)}::bigint[])
        on conflict (domain, t, policy_type, result_type, sending_mta_ip, receiving_mx_hostname,
          receiving_ip, organization) do update set failed = tls_failure_fact.failed + excluded.failed`.execute(
        trx,
      );
    }
  },
};
