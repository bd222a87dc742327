import { randomUUID } from "node:crypto";
import type { Projection } from "@dmarc-ledger/projection-engine";
import type { ReportSchema } from "../schema.js";

/**
 * The distinct policy and reported domains of all reports (TLS reports' policy domains among them) (see ReportDomainTable), and a new
 * random token in report_domain_token when a batch adds one, in the batch's transaction (why
 * random: the tenancy's domains projection).
 */
export const reportDomainsProjection: Projection<ReportSchema> = {
  name: "report_domains",
  tables: ["report_domain", "report_domain_token"],
  handles: new Set(["AggregateReportReceived", "ForensicReportReceived", "TlsReportReceived"]),
  async apply(trx, events) {
    const domains = new Set<string>();
    for (const event of events) {
      if (event.type === "AggregateReportReceived") domains.add(event.data.policy.domain.toLowerCase());
      else if (event.type === "ForensicReportReceived") domains.add(event.data.reportedDomain.toLowerCase());
      else if (event.type === "TlsReportReceived") {
        for (const policy of event.data.policies)
          if (policy.policyDomain !== "") domains.add(policy.policyDomain);
      }
    }
    if (domains.size === 0) return;
    const added = await trx
      .insertInto("report_domain")
      .values([...domains].map((domain) => ({ domain })))
      .onConflict((oc) => oc.column("domain").doNothing())
      .returning("domain")
      .execute();
    if (added.length === 0) return;
    await trx
      .insertInto("report_domain_token")
      .values({ single: true, token: randomUUID() })
      .onConflict((oc) => oc.column("single").doUpdateSet((eb) => ({ token: eb.ref("excluded.token") })))
      .execute();
  },
};
