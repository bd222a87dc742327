import type { Kysely } from "kysely";
import type { CounterFields } from "../counters.js";
import type { ReadModelSchema } from "../schema.js";
import type { RankingScope } from "../source-rankings/ranking-scope.js";
import type { Page, PageQuery } from "./page.js";
import { sourceCounters } from "./source-group-sums.js";
import { groupedSourcePage } from "./source-page-grouped.js";
import { chooseRanking, rankedSourcePage } from "./source-page-ranked.js";
import { groupId, sourcePicks } from "./source-picks.js";

export interface AggregateBySourceRecord extends CounterFields {
  SourceDomain: string;
  DomainPublished: string;
  Organization: string;
  SourceIp: string;
  Disposition: string;
  ARC: string | null;
  DispositionCount: string;
  LastDate: string;
  SPFDomain: string;
  DKIMDomain: string;
}

export interface SourcePageOptions {
  /** Group the facts even when a ranking is close (tests compare both ways). */
  ignoreRankings?: boolean;
}

const utcDate = (seconds: string) => new Date(Number(seconds) * 1000).toISOString().slice(0, 10);

/**
 * The records of (DomainPublished, SourceIp, Organization) groups: counters over the period's
 * rows, then for the page's groups the values picked by most messages. The page comes from the
 * closest calendar ranking when there is one (source-page-ranked.ts), else from grouping.
 */
async function sourcePage(
  db: Kysely<ReadModelSchema>,
  query: PageQuery,
  scope: RankingScope,
  options: SourcePageOptions,
): Promise<Page<AggregateBySourceRecord>> {
  const choice = options.ignoreRankings ? null : await chooseRanking(db, query, scope);
  const { total, rows } = choice
    ? await rankedSourcePage(db, query, scope, choice)
    : await groupedSourcePage(db, query, scope);
  const picks = await sourcePicks(db, query, scope, rows);
  return {
    total,
    records: rows.map((row) => {
      const picked = picks.get(groupId(row));
      if (!picked) throw new Error(`no facts for the source group ${groupId(row)} of a page`);
      return {
        SourceDomain: picked.source_domain ?? "",
        DomainPublished: row.domain,
        Organization: row.organization,
        SourceIp: row.source_ip,
        Disposition: picked.disposition,
        ARC: picked.arc,
        DispositionCount: picked.disposition_count,
        LastDate: utcDate(row.last_t),
        SPFDomain: picked.spf_domain ?? "",
        DKIMDomain: picked.dkim_domain ?? "",
        ...sourceCounters(row, scope === "unaligned"),
      };
    }),
  };
}

/** GET aggregate_by_source: one record per (DomainPublished, SourceIp, Organization). */
export const aggregateBySource = (
  db: Kysely<ReadModelSchema>,
  query: PageQuery,
  options: SourcePageOptions = {},
) => sourcePage(db, query, "all", options);

/** GET aggregate_by_unaligned_source: the same, over the rows that did not pass DMARC only. */
export const aggregateByUnalignedSource = (
  db: Kysely<ReadModelSchema>,
  query: PageQuery,
  options: SourcePageOptions = {},
) => sourcePage(db, query, "unaligned", options);
