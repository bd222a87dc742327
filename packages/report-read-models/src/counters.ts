import type { AggregateRowRecord } from "@dmarc-ledger/events";

/**
 * The contract's counter rules ("Counters" in docs/api-contract.md), in one place.
 * Result words are compared lower-case: receivers send "Pass" and "PASS" too.
 */
export interface RowVerdict {
  dmarcPass: boolean;
  dkimAligned: boolean;
  spfAligned: boolean;
  /** Some auth_results/dkim result is pass. */
  dkimPass: boolean;
  /** Some auth_results/spf result is pass. */
  spfPass: boolean;
  arc: "pass" | "fail" | null;
}

const isPass = (word: string | null | undefined) => (word ?? "").trim().toLowerCase() === "pass";

export function judgeRow(row: AggregateRowRecord): RowVerdict {
  const dkimAligned = isPass(row.policyDkim);
  const spfAligned = isPass(row.policySpf);
  return {
    dmarcPass: dkimAligned || spfAligned,
    dkimAligned,
    spfAligned,
    dkimPass: row.dkim.some((result) => isPass(result.result)),
    spfPass: row.spf.some((result) => isPass(result.result)),
    arc: row.arc,
  };
}

/** Sums of messages over a group of rows; the other counters are derived from these. */
export interface CounterSums {
  volume: number;
  dmarcPass: number;
  unalignedArcPass: number;
  dkimAligned: number;
  spfAligned: number;
  dkimPass: number;
  spfPass: number;
}

export const emptySums = (): CounterSums => ({
  volume: 0,
  dmarcPass: 0,
  unalignedArcPass: 0,
  dkimAligned: 0,
  spfAligned: 0,
  dkimPass: 0,
  spfPass: 0,
});

export function addToSums(sums: CounterSums, verdict: RowVerdict, count: number): void {
  sums.volume += count;
  if (verdict.dmarcPass) sums.dmarcPass += count;
  else if (verdict.arc === "pass") sums.unalignedArcPass += count;
  if (verdict.dkimAligned) sums.dkimAligned += count;
  if (verdict.spfAligned) sums.spfAligned += count;
  if (verdict.dkimPass) sums.dkimPass += count;
  if (verdict.spfPass) sums.spfPass += count;
}

/** The common counter fields of every aggregate record, in the spec's order, as decimal strings. */
export interface CounterFields {
  Volume: string;
  DMARC: string;
  DMARCUnaligned: string;
  DMARCUnalignedARCPass: string | null;
  DKIMAligned: string;
  DKIM: string;
  DKIMFailed: string;
  SPFAligned: string;
  SPF: string;
  SPFFailed: string;
}
