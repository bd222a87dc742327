import type { IngestedItem, IngestOutcome } from "@dmarc-ledger/intake";

function describeItem(item: IngestedItem): string {
  if (item.kind === "rejected") return `no report (${item.code}); message kept`;
  if (item.kind === "aggregate" && item.dropped.length > 0) {
    const rows = item.dropped.reduce((sum, entry) => sum + entry.rows, 0);
    const reasons = item.dropped.map((entry) => `${entry.reason} ${entry.rows}`).join(", ");
    return `${item.kind} report ${item.status}, ${rows} rows dropped (${reasons})`;
  }
  return `${item.kind} report ${item.status}`;
}

/**
 * One line for the 250 reply and the log: what the message held. Codes only, no report content
 * (reasons can quote a subject line, which does not belong in a protocol reply).
 */
export function describeOutcome(outcome: IngestOutcome): string {
  if (outcome.items.length === 0) return "nothing to store";
  return outcome.items.map(describeItem).join(", ");
}
