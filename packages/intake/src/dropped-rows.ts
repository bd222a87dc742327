import type { DroppedRows } from "@dmarc-ledger/dmarc-reports";
import type { IngestedItem } from "./ingest.js";

/**
 * The rows an input's reports dropped, summed by reason over its reports (the first row of each
 * reason from the first report that had one): what the archive row, the upload's answer and the
 * import's summary say of an input.
 */
export function droppedRowsOf(items: readonly IngestedItem[]): { rows: number; reasons: DroppedRows[] } {
  const byReason = new Map<string, DroppedRows>();
  let rows = 0;
  for (const item of items) {
    if (item.kind !== "aggregate") continue;
    for (const entry of item.dropped) {
      rows += entry.rows;
      const summed = byReason.get(entry.reason);
      if (summed) summed.rows += entry.rows;
      else byReason.set(entry.reason, { ...entry });
    }
  }
  return { rows, reasons: [...byReason.values()] };
}
