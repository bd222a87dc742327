import type { Command } from "commander";
import { type CliIO, jsonDocument } from "../io.js";
import { resolveTenant } from "../tenant-ref.js";
import { withRuntime } from "../with-runtime.js";
import { type ReportQueryOptions, reportPeriod, tenantDomainOption } from "./report-query.js";
import { catchUpReadModels } from "./wait-for-read-models.js";

/** Rows as columns padded to their widest cell; numbers (the right-aligned columns) on the right. */
export function table(header: string[], rows: string[][], right: ReadonlySet<number>): string[] {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        right.has(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
      )
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)];
}

const percent = (share: string) => `${(Number(share) * 100).toFixed(1)}%`;

export function registerSendersCommand(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  program
    .command("senders")
    .description(
      "print who sends as a tenant's domains: per domain and service, messages, alignment, approval",
    )
    .argument("<tenant>", "the tenant's id or name")
    .option("--domain <domain>", "one of the tenant's domains (and its subdomains' reports)")
    .option("--start <date>", "first day, YYYY-MM-DD or Unix seconds (default: 30 days before the end)")
    .option("--end <date>", "last day, YYYY-MM-DD or Unix seconds (default: now)")
    .option("--limit <n>", "senders shown at most (default 100, at most 1000)", "100")
    .option("--json", "print the records as one JSON array")
    .action(async (reference: string, options: ReportQueryOptions) => {
      const { limit, start, end } = reportPeriod(options);
      const page = await withRuntime(env, async (runtime) => {
        await catchUpReadModels(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        const { aggregateBySender } = await import("@dmarc-ledger/queries");
        const domain = await tenantDomainOption(runtime.db, tenantId, options.domain);
        return aggregateBySender(runtime.db, {
          tenantId,
          start,
          end,
          page: 1,
          perPage: limit,
          ...domain,
        });
      });
      if (options.json) {
        io.out(jsonDocument(page.records));
        return;
      }
      if (page.records.length === 0) {
        io.out("No reports in this period.");
        return;
      }
      const rows = page.records.map((r) => [
        r.Domain,
        r.Service,
        r.ServiceType,
        r.ASN === "" ? "" : `AS${r.ASN}`,
        r.Country,
        r.SourceIPs,
        r.Volume,
        percent(r.DMARCShare),
        percent(r.SPFAlignedShare),
        percent(r.DKIMAlignedShare),
        r.Approved === null ? "-" : r.Approved ? "yes" : "no",
      ]);
      const header = [
        "DOMAIN",
        "SENDER",
        "TYPE",
        "ASN",
        "CC",
        "IPS",
        "MESSAGES",
        "DMARC",
        "SPF",
        "DKIM",
        "APPROVED",
      ];
      for (const line of table(header, rows, new Set([5, 6, 7, 8, 9]))) io.out(line);
      if (page.total > page.records.length)
        io.out(`(${page.records.length} of ${page.total} senders; --limit shows more)`);
    });
}
