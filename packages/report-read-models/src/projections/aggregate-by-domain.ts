import type { Projection } from "@dmarc-ledger/projection-engine";
import type { ReportSchema } from "../schema.js";
import { SumsByKey } from "./add-sums.js";
import { rowParts } from "./report-parts.js";

/** Counter sums per (policy domain, day-normalised begin): by domain, and by domain group. */
export const aggregateByDomainProjection: Projection<ReportSchema> = {
  name: "aggregate_by_domain",
  tables: ["agg_domain"],
  handles: new Set(["AggregateReportReceived"]),
  async apply(trx, events) {
    const sums = new SumsByKey("agg_domain", [
      { name: "domain", type: "text" },
      { name: "t", type: "bigint" },
    ]);
    for (const part of rowParts(events)) sums.add([part.domain, part.t], part.verdict, part.count);
    await sums.write(trx);
  },
};
