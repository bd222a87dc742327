import type { RankingScope } from "@dmarc-ledger/report-read-models";
import { type Kysely, sql } from "kysely";
import type { PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";

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
  service_name: string | null;
  service_type: string | null;
  /** As text (bigint). */
  asn: string | null;
  asn_organization: string | null;
  country: string | null;
  /** The latest fact of the group in the period, Unix seconds. */
  last_t: string;
}

/** The kinds of picked value, in the one list of sums. */
const kinds = { disposition: 0, arc: 1, spfDomain: 2, dkimDomain: 3, latest: 4 } as const;
type Kind = (typeof kinds)[keyof typeof kinds];

/**
 * The picks of the page's groups over the period: of disposition, ARC, SPF and DKIM domain the
 * value with the most messages (dispositions tie reject, quarantine, none; other ties by name),
 * the date of the latest, and the source's reverse-DNS domain and naming (service, AS, country). Reads only the page's groups' facts (agg_source's key
 * starts with the group).
 *
 * Every kind of value is summed into one list and sorted once; the first of each kind and group is
 * its pick, and one aggregate gathers a group's picks. Joined per kind instead, the planner took
 * each kind's sums for one row and walked them once per group of the page: 100 ms for 400 groups
 * on PGlite, growing with the square of the page.
 */
export async function sourcePicks(
  db: Kysely<QuerySchema>,
  query: PageQuery,
  scope: RankingScope,
  groups: readonly { domain: string; source_ip: string; organization: string }[],
): Promise<Map<string, SourcePicks>> {
  if (groups.length === 0) return new Map();
  const sums = (kind: Kind, column: string, skipEmpty: boolean, tieOrder = sql`0`) => sql`
    select ${sql.lit(kind)} as kind, p.domain, p.source_ip, p.organization, p.${sql.ref(column)} as value,
      sum(p.volume) as n, ${tieOrder} as tie
    from page_facts p ${skipEmpty ? sql`where p.${sql.ref(column)} <> ''` : sql``}
    group by p.domain, p.source_ip, p.organization, p.${sql.ref(column)}`;
  const picked = (kind: Kind, column: "value" | "n") =>
    sql`min(b.${sql.ref(column)}) filter (where b.kind = ${sql.lit(kind)})`;
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
    best as (
      select distinct on (kind, domain, source_ip, organization) kind, domain, source_ip, organization, value, n
      from (
        ${sums(
          kinds.disposition,
          "disposition",
          false,
          sql`case p.disposition when 'reject' then 0 when 'quarantine' then 1 when 'none' then 2 else 3 end`,
        )}
        union all ${sums(kinds.arc, "arc", true)}
        union all ${sums(kinds.spfDomain, "spf_domain", true)}
        union all ${sums(kinds.dkimDomain, "dkim_domain", true)}
        union all
        select ${sql.lit(kinds.latest)}, p.domain, p.source_ip, p.organization, max(p.t)::text, null, 0
        from page_facts p
        group by p.domain, p.source_ip, p.organization
      ) as summed
      order by kind, domain, source_ip, organization, n desc, tie, value collate "C"
    ),
    -- One row per group with facts in the period, as the page's groups without any have no picks.
    picks as (
      select b.domain, b.source_ip, b.organization, ${picked(kinds.latest, "value")} as last_t,
        ${picked(kinds.disposition, "value")} as disposition,
        ${picked(kinds.disposition, "n")} as disposition_count, ${picked(kinds.arc, "value")} as arc,
        ${picked(kinds.spfDomain, "value")} as spf_domain, ${picked(kinds.dkimDomain, "value")} as dkim_domain
      from best b
      group by b.domain, b.source_ip, b.organization
    )
    select p.last_t, p.domain, p.source_ip, p.organization, p.disposition,
      p.disposition_count::text as disposition_count, p.arc, p.spf_domain, p.dkim_domain, n.source_domain,
      n.service_name, n.service_type, n.asn::text as asn, n.asn_organization, n.country
    from picks p
    left join source_ip_name n on n.source_ip = p.source_ip`.execute(db);
  return new Map(rows.map((row) => [groupId(row), row]));
}

export const groupId = (group: { domain: string; source_ip: string; organization: string }) =>
  `${group.domain}\u0000${group.source_ip}\u0000${group.organization}`;
