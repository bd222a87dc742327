import type { Command } from "commander";
import { type CliIO, jsonDocument } from "../io.js";
import { resolveTenant } from "../tenant-ref.js";
import { withRuntime } from "../with-runtime.js";
import { type ReportQueryOptions, reportPeriod, tenantDomainOption } from "./report-query.js";
import { table } from "./senders.js";
import { catchUpReadModels } from "./wait-for-read-models.js";

/** Failed sessions as a share of all, one decimal; "-" for none. */
const failureShare = (failed: string, sessions: string) =>
  Number(sessions) === 0 ? "-" : `${((Number(failed) / Number(sessions)) * 100).toFixed(1)}%`;

export function registerTlsCommand(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  program
    .command("tls")
    .description(
      "print a tenant's SMTP TLS reports (RFC 8460): sessions per policy domain and type, then the failures",
    )
    .argument("<tenant>", "the tenant's id or name")
    .option("--domain <domain>", "one of the tenant's domains (and its subdomains' reports)")
    .option("--start <date>", "first day, YYYY-MM-DD or Unix seconds (default: 30 days before the end)")
    .option("--end <date>", "last day, YYYY-MM-DD or Unix seconds (default: now)")
    .option("--limit <n>", "failure rows shown at most (default 20, at most 1000)", "20")
    .option("--json", "print both lists as one JSON object")
    .action(async (reference: string, options: ReportQueryOptions) => {
      const { limit, start, end } = reportPeriod(options);
      const { domains, failures } = await withRuntime(env, async (runtime) => {
        await catchUpReadModels(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        const { tlsByDomain, tlsFailures } = await import("@dmarc-ledger/queries");
        const domain = await tenantDomainOption(runtime.db, tenantId, options.domain);
        const query = { tenantId, start, end, page: 1, ...domain };
        return {
          domains: await tlsByDomain(runtime.db, { ...query, perPage: 1000 }),
          failures: await tlsFailures(runtime.db, { ...query, perPage: limit }),
        };
      });
      if (options.json) {
        io.out(jsonDocument({ domains: domains.records, failures: failures.records }));
        return;
      }
      if (domains.records.length === 0) {
        io.out("No TLS reports in this period.");
        return;
      }
      const domainRows = domains.records.map((r) => [
        r.Domain,
        r.PolicyType,
        r.Reports,
        r.Sessions,
        r.Successful,
        r.Failed,
        failureShare(r.Failed, r.Sessions),
      ]);
      const domainHeader = ["DOMAIN", "POLICY", "REPORTS", "SESSIONS", "SUCCESSFUL", "FAILED", "FAILED %"];
      for (const line of table(domainHeader, domainRows, new Set([2, 3, 4, 5, 6]))) io.out(line);
      if (failures.records.length === 0) return;
      io.out("");
      const failureRows = failures.records.map((r) => [
        r.Domain,
        r.PolicyType,
        r.ResultType,
        r.ReceivingMxHostname || "-",
        r.ReceivingIp || "-",
        r.SendingMtaIp || "-",
        r.Organization,
        r.FailedSessions,
      ]);
      const failureHeader = [
        "DOMAIN",
        "POLICY",
        "RESULT",
        "RECEIVING MX",
        "MX IP",
        "SENDING MTA",
        "REPORTER",
        "FAILED",
      ];
      for (const line of table(failureHeader, failureRows, new Set([7]))) io.out(line);
      if (failures.total > failures.records.length)
        io.out(`(${failures.records.length} of ${failures.total} failure rows; --limit shows more)`);
    });
}
