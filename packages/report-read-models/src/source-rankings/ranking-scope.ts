/** by_source ranks every fact; by_unaligned_source only the facts that did not pass DMARC. */
export type RankingScope = "all" | "unaligned";

export const rankingScopes: readonly RankingScope[] = ["all", "unaligned"];
