import { type Kysely, sql } from "kysely";
import type { ReadModelSchema } from "../schema.js";
import type { RankingScope } from "../source-rankings/ranking-scope.js";
import type { PageQuery } from "./page.js";

/** What a by-source record picks "the one with the most messages" of, for one group of a page. */
export interface SourcePicks {
  domain: string;
  source_ip: string;
  organization: string;
  disposition: string;
  disposition_count: string;
  arc: string | null;
  spf_domain: string | null;
  dkim_domain: string | null;
  source_domain: string | null;
  /** The latest fact of the group in the period, Unix seconds. */
  last_t: string;
}

/**
 * The picks of the page's groups over the period: of disposition, ARC, SPF and DKIM domain the
 * value with the most messages (dispositions tie reject, quarantine, none; other ties by name),
 * the date of the latest, and the source's reverse-DNS domain. Reads only the page's groups' facts (agg_source's key
 * starts with the group).
 */
export async function sourcePicks(
  db: Kysely<ReadModelSchema>,
  query: PageQuery,
  scope: RankingScope,
  groups: readonly { domain: string; source_ip: string; organization: string }[],
): Promise<Map<string, SourcePicks>> {
  if (groups.length === 0) return new Map();
  const pick = (column: string, skipEmpty: boolean, tieOrder = sql`value collate "C"`) => sql`
    select distinct on (domain, source_ip, organization) domain, source_ip, organization, value, n from (
      select p.domain, p.source_ip, p.organization, p.${sql.ref(column)} as value, sum(p.volume) as n
      from page_facts p ${skipEmpty ? sql`where p.${sql.ref(column)} <> ''` : sql``}
      group by p.domain, p.source_ip, p.organization, p.${sql.ref(column)}
    ) ranked
    order by domain, source_ip, organization, n desc, ${tieOrder}`;
  const { rows } = await sql<SourcePicks>`
    with page as (
      select * from unnest(${groups.map((g) => g.domain)}::text[], ${groups.map((g) => g.source_ip)}::text[],
        ${groups.map((g) => g.organization)}::text[]) as page(domain, source_ip, organization)
    ),
    page_facts as materialized (
      select f.domain, f.source_ip, f.organization, f.t, f.disposition, f.arc, f.spf_domain, f.dkim_domain,
        f.volume
      from page join agg_source f
        on f.domain = page.domain and f.source_ip = page.source_ip and f.organization = page.organization
      where f.t between ${query.start} and ${query.end}${scope === "unaligned" ? sql` and not f.dmarc_pass` : sql``}
    ),
    dispositions as (${pick(
      "disposition",
      false,
      sql`case value when 'reject' then 0 when 'quarantine' then 1 when 'none' then 2 else 3 end, value collate "C"`,
    )}),
    arcs as (${pick("arc", true)}),
    spf_domains as (${pick("spf_domain", true)}),
    dkim_domains as (${pick("dkim_domain", true)}),
    latest as (
      select p.domain, p.source_ip, p.organization, max(p.t)::text as last_t from page_facts p
      group by p.domain, p.source_ip, p.organization
    )
    select l.last_t, page.domain, page.source_ip, page.organization, d.value as disposition,
      d.n::text as disposition_count, a.value as arc, s.value as spf_domain, k.value as dkim_domain,
      n.source_domain
    from page
    join dispositions d using (domain, source_ip, organization)
    join latest l using (domain, source_ip, organization)
    left join arcs a using (domain, source_ip, organization)
    left join spf_domains s using (domain, source_ip, organization)
    left join dkim_domains k using (domain, source_ip, organization)
    left join source_ip_name n on n.source_ip = page.source_ip`.execute(db);
  return new Map(rows.map((row) => [groupId(row), row]));
}

export const groupId = (group: { domain: string; source_ip: string; organization: string }) =>
  `${group.domain}\u0000${group.source_ip}\u0000${group.organization}`;
