import { bytesSource } from "./io/byte-source.js";
import { readReports } from "./read-reports.js";
import type { AggregateReport, ParsedReport, ParseOptions } from "./types.js";

/** Every report in one input, collected in memory: for uploads, mails and tests. */
export async function parseReports(input: Uint8Array, options?: ParseOptions): Promise<ParsedReport[]> {
  const reports: ParsedReport[] = [];
  let current: AggregateReport | null = null;
  for await (const item of readReports(bytesSource(input), options)) {
    switch (item.kind) {
      case "aggregate-begin":
        current = { ...item.header, rows: [], warnings: [], dropped: [] };
        break;
      case "aggregate-rows":
        for (const row of item.rows) current!.rows.push(row);
        break;
      case "aggregate-end":
        current!.warnings = item.warnings;
        current!.dropped = item.dropped;
        reports.push({ kind: "aggregate", report: current! });
        current = null;
        break;
      case "failure":
        reports.push({ kind: "failure", report: item.report });
        break;
      case "tls":
        reports.push({ kind: "tls", report: item.report });
        break;
    }
  }
  return reports;
}
