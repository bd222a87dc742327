import { type StricterPolicy, senderRankingSums } from "@dmarc-ledger/report-read-models";

/**
 * Which sums of a sender ranking a page reads: every message (aggregate_by_sender), or the
 * failing messages a stricter policy would stop (policy_impact).
 */
export type SenderScope = "all" | StricterPolicy;

/** Every scope a sender ranking keeps. */
export const senderScopes: readonly SenderScope[] = ["all", "quarantine", "reject"];

/** A sum a sender ranking keeps per (domain, IP) and per (domain, sender). */
export type SenderSumName = (typeof senderRankingSums)[number];

/** A (domain, sender)'s or an address's sums as a ranking keeps them, as exact integers. */
export type SenderSums = Record<SenderSumName, bigint>;

/** The columns of sender_ranking and sender_ranking_ip a scope ranks, counts and weighs by. */
export function scopeColumns(scope: SenderScope): {
  weight: SenderSumName;
  forwarded: SenderSumName;
  ips: string;
} {
  if (scope === "all") return { weight: "volume", forwarded: "forwarded", ips: "source_ips" };
  return { weight: `stopped_${scope}`, forwarded: `forwarded_${scope}`, ips: `ips_${scope}` };
}

/** Sums read by name (`value` gives each as text or a number); every one a ranking keeps. */
export function senderSums(value: (name: SenderSumName) => string | number | bigint): SenderSums {
  return Object.fromEntries(senderRankingSums.map((name) => [name, BigInt(value(name))])) as SenderSums;
}
