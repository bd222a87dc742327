import {
  inListedDomains,
  type OwnedReportDomain,
  ownedReportDomains as ownedReportDomainsOf,
  senderNameColumns,
} from "@dmarc-ledger/report-read-models";
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";

/**
 * The tenant's report domains with the tenant's domain each falls under (report-read-models:
 * the sender rankings record the same).
 */
export async function ownedReportDomains(
  db: Kysely<QuerySchema>,
  query: PageQuery,
): Promise<OwnedReportDomain[]> {
  return ownedReportDomainsOf(db, query.tenantId, query.domain);
}

/**
 * SQL for one row per (tenant's domain, source IP) with facts in the period, matching
 * `condition` over agg_sender_fact `f`: its sums, its sender and what names it, and whether it is
 * approved. The sender of an IP is its service (senderNameColumns: named by its forward-confirmed
 * name, an authentication domain or its AS); else the base domain of its forward-confirmed name;
 * else its AS's organisation; else "unknown".
 * Its approval: the most specific approved or refused range holding it, else the decision on
 * its sender, else null. `withRanges` false (no range is decided for these domains) leaves the
 * per-address range lookup out: a hash join on the sender's decision is all that is left.
 */
export function senderIps(
  domains: readonly OwnedReportDomain[],
  query: Pick<PageQuery, "start" | "end">,
  condition: RawBuilder<unknown> = sql`true`,
  withRanges = true,
): RawBuilder<unknown> {
  return sql`
    select ip.owner, ip.source_ip, ip.volume, ip.dmarc_pass, ip.unaligned_arc_pass, ip.dkim_aligned,
      ip.spf_aligned, ip.dkim_pass, ip.spf_pass, ip.forwarded, ip.kind, ip.sender, ip.service_type, ip.asn,
      ip.asn_organization, ip.country, ip.named_by, ${approvalOf("ip", sql`decided.approved`, withRanges)} as approved
    from (
      select s.*, ${senderNameColumns("n")}
      from (
        select d.owner, f.source_ip, sum(f.volume) as volume,
          sum(case when f.dmarc_pass then f.volume else 0 end) as dmarc_pass,
          sum(f.unaligned_arc_pass) as unaligned_arc_pass, sum(f.dkim_aligned) as dkim_aligned,
          sum(f.spf_aligned) as spf_aligned, sum(f.dkim_pass) as dkim_pass, sum(f.spf_pass) as spf_pass,
          sum(case when f.forwarded then f.volume else 0 end) as forwarded
        from agg_sender_fact f
        join unnest(${domains.map((d) => d.domain)}::text[], ${domains.map((d) => d.owner)}::text[])
          as d(domain, owner) on d.domain = f.domain
        where f.t >= ${query.start} and f.t <= ${query.end} and ${condition}
        group by d.owner, f.source_ip
      ) s
      left join source_ip_name n on n.source_ip = s.source_ip
    ) ip
    left join sender_approval decided
      on decided.domain = ip.owner and decided.kind = 'service' and decided.sender = ip.sender`;
}

/** The decision of the most specific decided range holding an address `alias` (owner, source_ip), or null. */
export const rangeApproval = (
  alias: string,
): RawBuilder<unknown> => sql`(select a.approved from sender_approval a
    where a.domain = ${sql.ref(`${alias}.owner`)} and a.kind = 'range'
      and ${sql.ref(`${alias}.source_ip`)}::inet <<= a.sender::inet
    order by masklen(a.sender::inet) desc limit 1)`;

/**
 * An address's approval: the most specific decided range holding it, else `decided` (the
 * decision on its sender). `withRanges` false (no range decided for the domains) leaves the
 * per-address range lookup out.
 */
export const approvalOf = (
  alias: string,
  decided: RawBuilder<unknown>,
  withRanges: boolean,
): RawBuilder<unknown> => (withRanges ? sql`coalesce(${rangeApproval(alias)}, ${decided})` : decided);

/** Whether any IP range is decided for the domains' owners (most tenants decide none). */
export async function rangesDecided(
  db: Kysely<QuerySchema>,
  domains: readonly OwnedReportDomain[],
): Promise<boolean> {
  const owners = [...new Set(domains.map((d) => d.owner))];
  const { rows } = await sql<{ found: boolean }>`select exists (select 1 from sender_approval
    where kind = 'range' and ${inListedDomains(owners, "domain")}) as found`.execute(db);
  return rows[0]?.found === true;
}

/**
 * SQL for the value of `column` with the most messages per (owner, sender), ties to the smallest
 * bytewise, over the addresses of `from` (a CTE of `ips` rows): one grouping pass, not a lookup
 * per sender. A sender's pick depends on its own addresses only, so `from` can be the page's.
 */
export function mostPerSender(
  column: "service_type" | "asn" | "asn_organization" | "country" | "named_by",
  from = "ips",
): RawBuilder<unknown> {
  const value = sql.ref(`i.${column}`);
  return sql`select distinct on (owner, sender) owner, sender, value from (
      select i.owner, i.sender, ${value} as value, sum(i.volume) as n from ${sql.table(from)} i group by 1, 2, 3
    ) v order by owner, sender, n desc, value collate "C"`;
}
