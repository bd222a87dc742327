import { spreadOverDays } from "@dmarc-ledger/dmarc-reports";
import type { AggregateReportReceived, AggregateRowRecord, DomainEvent } from "@dmarc-ledger/events";
import { judgeRow, type RowVerdict } from "../counters.js";

export interface RowPart {
  report: AggregateReportReceived;
  /** The policy domain, lower-case. */
  domain: string;
  row: AggregateRowRecord;
  verdict: RowVerdict;
  /** Day-normalised begin of this part, Unix seconds. */
  t: number;
  count: number;
}

/**
 * The parts of one event, computed once: the three aggregate projections see the same decoded
 * event objects within a batch, and the verdicts and day split are most of their work.
 */
const partsByEvent = new WeakMap<DomainEvent, RowPart[]>();

function partsOf(event: DomainEvent & { type: "AggregateReportReceived" }): RowPart[] {
  const cached = partsByEvent.get(event);
  if (cached) return cached;
  const report = event.data;
  const domain = report.policy.domain.toLowerCase();
  const parts: RowPart[] = [];
  for (const row of report.rows) {
    const verdict = judgeRow(row);
    for (const part of spreadOverDays(report.begin, report.end, row.count)) {
      if (part.count > 0) parts.push({ report, domain, row, verdict, t: part.t, count: part.count });
    }
  }
  partsByEvent.set(event, parts);
  return parts;
}

/**
 * Every row of every aggregate report in a batch, split over the UTC days of its report (a
 * report of at most 24 hours is one part at its own begin), with the contract's verdict.
 */
export function* rowParts(events: readonly DomainEvent[]): Generator<RowPart> {
  for (const event of events) {
    if (event.type === "AggregateReportReceived") yield* partsOf(event);
  }
}
