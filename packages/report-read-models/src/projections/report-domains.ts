import type { Projection } from "@dmarc-ledger/projection-engine";
import type { ReportSchema } from "../schema.js";

/** The distinct policy and reported domains of all reports (see ReportDomainTable). */
export const reportDomainsProjection: Projection<ReportSchema> = {
  name: "report_domains",
  tables: ["report_domain"],
  handles: new Set(["AggregateReportReceived", "ForensicReportReceived"]),
  async apply(trx, events) {
    const domains = new Set<string>();
    for (const event of events) {
      if (event.type === "AggregateReportReceived") domains.add(event.data.policy.domain.toLowerCase());
      else if (event.type === "ForensicReportReceived") domains.add(event.data.reportedDomain.toLowerCase());
    }
    if (domains.size === 0) return;
    await trx
      .insertInto("report_domain")
      .values([...domains].map((domain) => ({ domain })))
      .onConflict((oc) => oc.column("domain").doNothing())
      .execute();
  },
};
