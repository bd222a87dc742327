import { type Kysely, sql } from "kysely";
import type { CounterFields } from "../counters.js";
import type { ReadModelSchema } from "../schema.js";
import { type CounterColumns, counterSelect, toCounterFields } from "./counter-columns.js";
import { offsetOf, type Page, type PageQuery } from "./page.js";
import { belongsToTenant } from "./tenant-domain-filter.js";

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

interface SourceRow extends CounterColumns {
  domain: string;
  source_ip: string;
  organization: string;
  last_date: string;
  disposition: string;
  disposition_count: string;
  arc: string | null;
  spf_domain: string | null;
  dkim_domain: string | null;
  source_domain: string | null;
  total: string;
}

/**
 * The record of one (DomainPublished, SourceIp, Organization) group: counters over its rows, and
 * of disposition, ARC, SPF and DKIM domain the value with the most messages (dispositions tie
 * reject, quarantine, none; other ties by name). The picks are computed for the page's groups
 * only.
 */
async function sourcePage(
  db: Kysely<ReadModelSchema>,
  query: PageQuery,
  unalignedOnly: boolean,
): Promise<Page<AggregateBySourceRecord>> {
  const facts = sql`select * from agg_source s
    where s.t >= ${query.start} and s.t <= ${query.end}
      and ${belongsToTenant(query.tenantId, "s.domain")}
      ${unalignedOnly ? sql`and not s.dmarc_pass` : sql``}`;
  const pick = (column: string, skipEmpty: boolean, tieOrder = sql`value collate "C"`) => sql`
    select distinct on (domain, source_ip, organization) domain, source_ip, organization, value, n from (
      select p.domain, p.source_ip, p.organization, p.${sql.ref(column)} as value, sum(p.volume) as n
      from page_facts p ${skipEmpty ? sql`where p.${sql.ref(column)} <> ''` : sql``}
      group by p.domain, p.source_ip, p.organization, p.${sql.ref(column)}
    ) ranked
    order by domain, source_ip, organization, n desc, ${tieOrder}`;

  const statement = sql<SourceRow>`
    with facts as not materialized (${facts}),
    page as (
      select f.domain, f.source_ip, f.organization, ${counterSelect("f", "flag")},
        to_char(to_timestamp(max(f.t)) at time zone 'UTC', 'YYYY-MM-DD') as last_date,
        count(*) over () as total
      from facts f
      group by f.domain, f.source_ip, f.organization
      order by sum(f.volume) desc, f.domain collate "C", f.source_ip collate "C", f.organization collate "C"
      limit ${query.perPage} offset ${offsetOf(query)}
    ),
    page_facts as (
      select f.* from facts f join page using (domain, source_ip, organization)
    ),
    dispositions as (${pick(
      "disposition",
      false,
      sql`case value when 'reject' then 0 when 'quarantine' then 1 when 'none' then 2 else 3 end, value collate "C"`,
    )}),
    arcs as (${pick("arc", true)}),
    spf_domains as (${pick("spf_domain", true)}),
    dkim_domains as (${pick("dkim_domain", true)})
    select page.*, d.value as disposition, d.n::text as disposition_count, a.value as arc,
      s.value as spf_domain, k.value as dkim_domain, n.source_domain
    from page
    join dispositions d using (domain, source_ip, organization)
    left join arcs a using (domain, source_ip, organization)
    left join spf_domains s using (domain, source_ip, organization)
    left join dkim_domains k using (domain, source_ip, organization)
    left join source_ip_name n on n.source_ip = page.source_ip
    order by page.volume::numeric desc, page.domain collate "C", page.source_ip collate "C", page.organization collate "C"`;
  // A year of sources is a few hundred thousand groups to hash: with this much memory they stay
  // off disk. Set for this query's transaction only.
  const { rows } = await db.transaction().execute(async (trx) => {
    await sql`set local work_mem = '64MB'`.execute(trx);
    return statement.execute(trx);
  });

  const total =
    rows.length > 0
      ? Number(rows[0]!.total)
      : Number(
          (
            await sql<{ n: string }>`with facts as (${facts})
              select count(*) as n from (select 1 from facts group by domain, source_ip, organization) g`.execute(
              db,
            )
          ).rows[0]?.n ?? 0,
        );

  return {
    total,
    records: rows.map((row) => ({
      SourceDomain: row.source_domain ?? "",
      DomainPublished: row.domain,
      Organization: row.organization,
      SourceIp: row.source_ip,
      Disposition: row.disposition,
      ARC: row.arc,
      DispositionCount: row.disposition_count,
      LastDate: row.last_date,
      SPFDomain: row.spf_domain ?? "",
      DKIMDomain: row.dkim_domain ?? "",
      ...toCounterFields(row, unalignedOnly),
    })),
  };
}

/** GET aggregate_by_source: one record per (DomainPublished, SourceIp, Organization). */
export const aggregateBySource = (db: Kysely<ReadModelSchema>, query: PageQuery) =>
  sourcePage(db, query, false);

/** GET aggregate_by_unaligned_source: the same, over the rows that did not pass DMARC only. */
export const aggregateByUnalignedSource = (db: Kysely<ReadModelSchema>, query: PageQuery) =>
  sourcePage(db, query, true);
