import type { AggregateRowRecord } from "@dmarc-ledger/events";
import { SumsByKey } from "./add-sums.js";
import type { Projection } from "./projection.js";
import { rowParts } from "./report-parts.js";

const isPass = (result: string) => result.toLowerCase() === "pass";

/** The row's SPF domain: its first SPF auth result's (rows rarely carry more than one). */
export function spfDomainOf(row: AggregateRowRecord): string {
  return (row.spf[0]?.domain ?? "").toLowerCase();
}

/** The row's DKIM domain: the first passing signature's, else the first signature's. */
export function dkimDomainOf(row: AggregateRowRecord): string {
  return ((row.dkim.find((result) => isPass(result.result)) ?? row.dkim[0])?.domain ?? "").toLowerCase();
}

/**
 * The facts behind aggregate_by_source and aggregate_by_unaligned_source: sums per source and
 * per the values those records pick the most frequent of.
 */
export const aggregateBySourceProjection: Projection = {
  name: "aggregate_by_source",
  tables: ["agg_source"],
  handles: new Set(["AggregateReportReceived"]),
  async apply(trx, events) {
    const keyColumns = [
      "domain",
      "t",
      "source_ip",
      "organization",
      "disposition",
      "arc",
      "spf_domain",
      "dkim_domain",
      "dmarc_pass",
    ];
    const sums = new SumsByKey("agg_source", keyColumns, false);
    for (const part of rowParts(events)) {
      sums.add(
        {
          domain: part.domain,
          t: part.t,
          source_ip: part.row.sourceIp,
          organization: part.report.organization,
          disposition: part.row.disposition.toLowerCase(),
          arc: part.verdict.arc ?? "",
          spf_domain: spfDomainOf(part.row),
          dkim_domain: dkimDomainOf(part.row),
          dmarc_pass: part.verdict.dmarcPass,
        },
        part.verdict,
        part.count,
      );
    }
    await sums.write(trx);
  },
};
