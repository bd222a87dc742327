import type { CounterFields, SenderKind } from "@dmarc-ledger/report-read-models";
import { type Kysely, sql } from "kysely";
import { offsetOf, type Page, type PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";
import { mostPerSender, ownedReportDomains, rangesDecided, senderIps } from "./sender-ips.js";
import { type NamedBy, namedByFor, namedByOf, rankedNamedBy } from "./sender-named-by.js";
import {
  type RankedOptions,
  type RankedSenderRow,
  rankedSenderPage,
  withSenderRanking,
} from "./sender-page-ranked.js";

export type { SenderKind };

export interface AggregateBySenderRecord extends CounterFields {
  /** The tenant's domain (a subdomain's reports count for it). */
  Domain: string;
  /**
   * The service; for a source no service is known for, the base domain of its forward-confirmed
   * name, else its AS's organisation ("Google LLC", its number in ASN), else "unknown".
   */
  Service: string;
  /** The service's type ("Email Provider", "SaaS", …); "" for an unknown source. */
  ServiceType: string;
  SenderKind: SenderKind;
  /**
   * What named it, for the addresses with the most messages: `rdns` (the forward-confirmed
   * reverse name), `auth_domain` (the passing DKIM d= or SPF domain the reports carry for it),
   * `asn` (its AS), or null for an unknown sender.
   */
  NamedBy: NamedBy;
  /** Of the sender's addresses, the AS, its organisation and the country with the most messages. */
  ASN: string;
  ASNOrganization: string;
  Country: string;
  /** How many source IPs sent as the domain through this sender in the period. */
  SourceIPs: string;
  /** DMARC, SPFAligned and DKIMAligned over Volume, rounded half up to 4 decimals: "0.9731". */
  DMARCShare: string;
  SPFAlignedShare: string;
  DKIMAlignedShare: string;
  /** true when every address is approved, false when every one is refused, else null. */
  Approved: boolean | null;
}

/** A grouped row: the ranked row's fields but the policy scope's, with the page's total. */
interface SenderRow extends Omit<RankedSenderRow, "forwarded" | "legitimate" | "weight"> {
  total: string;
  named_by: string | null;
}

/** A share of `part` in `whole` as text, rounded half up to 4 decimals (exact: integers only). */
export function share(part: string, whole: string): string {
  const total = BigInt(whole);
  if (total === 0n) return "0.0000";
  const scaled = (BigInt(part) * 20_000n + total) / (2n * total);
  return `${scaled / 10_000n}.${(scaled % 10_000n).toString().padStart(4, "0")}`;
}

/**
 * GET aggregate_by_sender: one record per (tenant's domain, sender), over the period, by volume
 * descending then domain and sender bytewise. From the tenant's sender ranking that answers the
 * period exactly when there is one (sender-page-ranked.ts), else by grouping the period's facts.
 */
export async function aggregateBySender(
  db: Kysely<QuerySchema>,
  query: PageQuery,
): Promise<Page<AggregateBySenderRecord>> {
  return (await aggregateBySenderRanked(db, query)) ?? aggregateBySenderGrouped(db, query);
}

/** aggregate_by_sender from a sender ranking, or null when none answers the period exactly. */
export async function aggregateBySenderRanked(
  db: Kysely<QuerySchema>,
  query: PageQuery,
  options?: RankedOptions,
): Promise<Page<AggregateBySenderRecord> | null> {
  return withSenderRanking(
    db,
    query,
    async (trx, build, domains) => {
      const total = Number(build.totals.groups);
      const rows = await rankedSenderPage(trx, build, query, "all", total, await rangesDecided(trx, domains));
      const named = await rankedNamedBy(trx, build.buildId, rows);
      return {
        total,
        records: rows.map((row) =>
          senderRecord({
            ...row,
            total: String(total),
            named_by: namedByFor(named, row.owner, row.sender, row.kind),
          }),
        ),
      };
    },
    options,
  );
}

/** aggregate_by_sender by grouping the period's facts per request. */
export async function aggregateBySenderGrouped(
  db: Kysely<QuerySchema>,
  query: PageQuery,
): Promise<Page<AggregateBySenderRecord>> {
  const domains = await ownedReportDomains(db, query);
  if (domains.length === 0) return { total: 0, records: [] };
  const ranges = await rangesDecided(db, domains);
  const { rows } = await sql<SenderRow>`
    with ips as materialized (${senderIps(domains, query, undefined, ranges)}),
    grouped as (
      select i.owner, i.sender, min(i.kind) as kind, count(*) as source_ips, sum(i.volume) as volume,
        sum(i.dmarc_pass) as dmarc_pass, sum(i.unaligned_arc_pass) as unaligned_arc_pass,
        sum(i.dkim_aligned) as dkim_aligned, sum(i.spf_aligned) as spf_aligned, sum(i.dkim_pass) as dkim_pass,
        sum(i.spf_pass) as spf_pass,
        case when bool_and(i.approved is true) then true when bool_and(i.approved is false) then false end
          as approved
      from ips i group by i.owner, i.sender
    ),
    page as materialized (
      select g.*, count(*) over () as total from grouped g
      order by g.volume desc, g.owner collate "C", g.sender collate "C"
      limit ${query.perPage} offset ${offsetOf(query)}
    ),
    -- The picks over the page's senders' addresses only: over every address they were four
    -- groupings of the period's addresses, a third of the query's time (EXPLAIN ANALYZE, 100,000
    -- rows). Each computed once (materialized), then hashed: inlined beside the page's LIMIT the
    -- planner ran them again for every record of the page.
    page_ips as materialized (select i.* from ips i join page p using (owner, sender)),
    picked_type as materialized (${mostPerSender("service_type", "page_ips")}),
    picked_asn as materialized (${mostPerSender("asn", "page_ips")}),
    picked_organization as materialized (${mostPerSender("asn_organization", "page_ips")}),
    picked_country as materialized (${mostPerSender("country", "page_ips")}),
    picked_named_by as materialized (${mostPerSender("named_by", "page_ips")})
    select g.owner, g.sender, g.kind, g.source_ips::text as source_ips, g.volume::text as volume,
      g.dmarc_pass::text as dmarc_pass, g.unaligned_arc_pass::text as unaligned_arc_pass,
      g.dkim_aligned::text as dkim_aligned, g.spf_aligned::text as spf_aligned, g.dkim_pass::text as dkim_pass,
      g.spf_pass::text as spf_pass, g.approved, g.total::text as total,
      st.value as service_type, an.value as asn, ao.value as asn_organization, co.value as country,
      nb.value as named_by
    from page g
    join picked_type st using (owner, sender)
    join picked_asn an using (owner, sender)
    join picked_organization ao using (owner, sender)
    join picked_country co using (owner, sender)
    join picked_named_by nb using (owner, sender)
    order by g.volume desc, g.owner collate "C", g.sender collate "C"`.execute(db);
  let total = Number(rows[0]?.total ?? 0);
  if (rows.length === 0 && query.page > 1) {
    const counted = await sql<{ n: string }>`
      with ips as (${senderIps(domains, query, undefined, ranges)})
      select count(distinct (owner, sender))::text as n from ips`.execute(db);
    total = Number(counted.rows[0]?.n ?? 0);
  }
  return { total, records: rows.map(senderRecord) };
}

function senderRecord(row: SenderRow): AggregateBySenderRecord {
  const dmarcUnaligned = (BigInt(row.volume) - BigInt(row.dmarc_pass)).toString();
  return {
    Domain: row.owner,
    Service: row.sender,
    ServiceType: row.service_type,
    SenderKind: row.kind,
    NamedBy: namedByOf(row.named_by),
    ASN: row.asn,
    ASNOrganization: row.asn_organization,
    Country: row.country,
    SourceIPs: row.source_ips,
    Volume: row.volume,
    DMARC: row.dmarc_pass,
    DMARCUnaligned: dmarcUnaligned,
    DMARCUnalignedARCPass: row.unaligned_arc_pass,
    DKIMAligned: row.dkim_aligned,
    DKIM: row.dkim_pass,
    DKIMFailed: (BigInt(row.volume) - BigInt(row.dkim_pass)).toString(),
    SPFAligned: row.spf_aligned,
    SPF: row.spf_pass,
    SPFFailed: (BigInt(row.volume) - BigInt(row.spf_pass)).toString(),
    DMARCShare: share(row.dmarc_pass, row.volume),
    SPFAlignedShare: share(row.spf_aligned, row.volume),
    DKIMAlignedShare: share(row.dkim_aligned, row.volume),
    Approved: row.approved,
  };
}
