import type { CounterFields, RankingScope } from "@dmarc-ledger/report-read-models";
import { tenantReportDomains } from "@dmarc-ledger/report-read-models";
import { type Kysely, sql } from "kysely";
import type { Page, PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";
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
  /**
   * Additions of issue 23 (not in the spec): the source's naming, "" when unknown (the spec's
   * convention, as SourceDomain).
   */
  Service: string;
  ServiceType: string;
  /** The AS number, as a decimal string. */
  ASN: string;
  ASNOrganization: string;
  /** ISO 3166-1 alpha-2. */
  Country: string;
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
  db: Kysely<QuerySchema>,
  query: PageQuery,
  scope: RankingScope,
  options: SourcePageOptions,
): Promise<Page<AggregateBySourceRecord>> {
  // One snapshot: the ranking chosen, its rows and the facts must agree, whatever the upkeep
  // commits meanwhile.
  const { total, rows, picks } = await db
    .transaction()
    .setIsolationLevel("repeatable read")
    .execute(async (trx) => {
      // Grouping a year of sources hashes millions of groups: with this much memory fewer spill
      // to disk. For this transaction only.
      await sql`set local work_mem = '64MB'`.execute(trx);
      const domains = await tenantReportDomains(trx, query.tenantId, query.domain);
      // Rankings hold every domain and sender of the tenant: one domain's or one sender's page is
      // grouped from its facts.
      const choice =
        options.ignoreRankings || query.domain !== undefined || query.sender !== undefined
          ? null
          : await chooseRanking(trx, query, scope);
      const page = choice
        ? await rankedSourcePage(trx, query, scope, choice, domains)
        : await groupedSourcePage(trx, query, scope, domains);
      return { ...page, picks: await sourcePicks(trx, query, scope, page.rows) };
    });
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
        LastDate: utcDate(picked.last_t),
        SPFDomain: picked.spf_domain ?? "",
        DKIMDomain: picked.dkim_domain ?? "",
        ...sourceCounters(row, scope === "unaligned"),
        Service: picked.service_name ?? "",
        ServiceType: picked.service_type ?? "",
        ASN: picked.asn ?? "",
        ASNOrganization: picked.asn_organization ?? "",
        Country: picked.country ?? "",
      };
    }),
  };
}

/** GET aggregate_by_source: one record per (DomainPublished, SourceIp, Organization). */
export const aggregateBySource = (
  db: Kysely<QuerySchema>,
  query: PageQuery,
  options: SourcePageOptions = {},
) => sourcePage(db, query, "all", options);

/** GET aggregate_by_unaligned_source: the same, over the rows that did not pass DMARC only. */
export const aggregateByUnalignedSource = (
  db: Kysely<QuerySchema>,
  query: PageQuery,
  options: SourcePageOptions = {},
) => sourcePage(db, query, "unaligned", options);
