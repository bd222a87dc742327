import type { EventStore } from "@dmarc-ledger/event-store";
import {
  type AggregateReportReceived,
  type AggregateRowRecord,
  newEvent,
  streams,
} from "@dmarc-ledger/events";

/** The parts of a report row a test chooses; the rest are the parser's "absent". */
export type TestRow = Pick<
  AggregateRowRecord,
  "sourceIp" | "count" | "disposition" | "policyDkim" | "policySpf"
> &
  Partial<AggregateRowRecord>;

/**
 * An AggregateReportReceived payload, whole and in one chunk, as the parser would hand it over:
 * the tests that append reports directly name only what they vary.
 */
export function aggregateReport(report: {
  identity: string;
  domain: string;
  organization: string;
  begin: number;
  end: number;
  rows: readonly TestRow[];
  policy?: string;
}): AggregateReportReceived {
  return {
    identity: report.identity,
    schema: "1.0",
    orgName: report.organization,
    organization: report.organization,
    email: `dmarc@${report.organization}`,
    reportId: report.identity,
    begin: report.begin,
    end: report.end,
    policy: {
      domain: report.domain,
      adkim: null,
      aspf: null,
      p: report.policy ?? "none",
      sp: null,
      np: null,
      pct: null,
      fo: null,
      testing: null,
      discoveryMethod: null,
    },
    rows: report.rows.map((row) => ({
      reasons: [],
      arc: null,
      headerFrom: report.domain,
      envelopeFrom: null,
      envelopeTo: null,
      dkim: [],
      spf: [],
      ...row,
    })),
    chunk: { index: 0, last: true },
    source: "test",
    warnings: [],
  };
}

/** Appends each payload as an AggregateReportReceived event on its report's own stream. */
export async function appendAggregateReports(
  store: EventStore,
  payloads: readonly AggregateReportReceived[],
): Promise<void> {
  for (const payload of payloads) {
    await store.append(
      streams.aggregateReport(payload.identity),
      [newEvent("AggregateReportReceived", payload, { causedBy: "test" })],
      "no_stream",
    );
  }
}
