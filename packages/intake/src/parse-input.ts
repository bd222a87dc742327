import type { AggregateRow, ParseOptions, ReportItem } from "@dmarc-ledger/dmarc-reports";
import { readReports } from "@dmarc-ledger/dmarc-reports";
import type { HoldBudget } from "./hold-budget.js";
import type { InputBytes } from "./input-bytes.js";

/**
 * An input whose rows come to at most this much JSON (rowBytes; about 35,000 real rows) is held
 * in memory after its one parse and stored from there. A larger one is parsed a second time while
 * it is stored, so that memory stays bounded whatever a report holds; a HoldBudget bounds what all
 * the inputs of a process hold at once.
 */
export const holdMaxBytes = 16 * 1024 * 1024;
/**
 * An input parsed to its end before anything is stored: a report refused at its last row (a count
 * past the limit, a field too long, a truncated file) must leave no chunk behind as a fact.
 */
export type ParsedInput =
  /** Everything the input holds, in memory: rows up to holdMaxBytes, `bytes` of them (rowBytes). */
  | { kind: "held"; items: ReportItem[]; bytes: number }
  /** More rows than that: parsed whole once, read again while storing. */
  | { kind: "large" }
  | { kind: "refused"; error: unknown };

/**
 * Parses `input` to its end. Its items are held while their rows stay within `maxHeldBytes` and
 * `budget` (taken from it as they come; the caller gives a held input's bytes back once stored).
 */
export async function parseInput(
  input: InputBytes,
  parseOptions?: ParseOptions,
  maxHeldBytes = holdMaxBytes,
  budget?: HoldBudget,
): Promise<ParsedInput> {
  const held: ReportItem[] = [];
  let heldBytes = 0;
  let holding = true;
  const stopHolding = () => {
    holding = false;
    held.length = 0;
    budget?.give(heldBytes);
    heldBytes = 0;
  };
  try {
    for await (const item of readReports(input.open(), parseOptions)) {
      if (!holding) continue;
      held.push(item);
      if (item.kind !== "aggregate-rows") continue;
      let bytes = 0;
      for (const row of item.rows) bytes += rowBytes(row);
      if (heldBytes + bytes > maxHeldBytes || (budget && !budget.take(bytes))) stopHolding();
      else heldBytes += bytes;
    }
  } catch (error) {
    if (holding) stopHolding();
    return { kind: "refused", error };
  }
  return holding ? { kind: "held", items: held, bytes: heldBytes } : { kind: "large" };
}

/** Rough JSON size of a row, for chunking; deterministic, so resumed imports chunk alike. */
export function rowBytes(row: AggregateRow): number {
  let bytes = 300 + row.sourceIp.length + row.headerFrom.length;
  bytes += (row.envelopeFrom?.length ?? 0) + (row.envelopeTo?.length ?? 0);
  for (const reason of row.reasons) bytes += 30 + reason.type.length + (reason.comment?.length ?? 0);
  for (const dkim of row.dkim) {
    bytes += 60 + dkim.domain.length + (dkim.selector?.length ?? 0) + dkim.result.length;
    bytes += dkim.humanResult?.length ?? 0;
  }
  for (const spf of row.spf) bytes += 40 + spf.domain.length + (spf.scope?.length ?? 0) + spf.result.length;
  return bytes;
}
