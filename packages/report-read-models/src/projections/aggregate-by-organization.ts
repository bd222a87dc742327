import type { Projection } from "@dmarc-ledger/projection-engine";
import type { ReportSchema } from "../schema.js";
import { SumsByKey } from "./add-sums.js";
import { rowParts } from "./report-parts.js";

/** Counter sums per (policy domain, reporting organisation, day-normalised begin). */
export const aggregateByOrganizationProjection: Projection<ReportSchema> = {
  name: "aggregate_by_organization",
  tables: ["agg_organization"],
  handles: new Set(["AggregateReportReceived"]),
  async apply(trx, events) {
    const sums = new SumsByKey("agg_organization", [
      { name: "domain", type: "text" },
      { name: "organization", type: "text" },
      { name: "t", type: "bigint" },
    ]);
    for (const part of rowParts(events)) {
      sums.add([part.domain, part.report.organization, part.t], part.verdict, part.count);
    }
    await sums.write(trx);
  },
};
