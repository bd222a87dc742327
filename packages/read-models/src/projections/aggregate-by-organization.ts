import { SumsByKey } from "./add-sums.js";
import type { Projection } from "./projection.js";
import { rowParts } from "./report-parts.js";

/** Counter sums per (policy domain, reporting organisation, day-normalised begin). */
export const aggregateByOrganizationProjection: Projection = {
  name: "aggregate_by_organization",
  tables: ["agg_organization"],
  handles: new Set(["AggregateReportReceived"]),
  async apply(trx, events) {
    const sums = new SumsByKey("agg_organization", ["domain", "organization", "t"]);
    for (const part of rowParts(events)) {
      sums.add(
        { domain: part.domain, organization: part.report.organization, t: part.t },
        part.verdict,
        part.count,
      );
    }
    await sums.write(trx);
  },
};
