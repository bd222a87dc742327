import { type RawBuilder, sql } from "kysely";
import type { Span } from "../source-rankings/buckets.js";
import { inListedDomains } from "../tenant-domain-filter.js";
import { senderRankingSums, senderSumsOf } from "./build-sender-ranking.js";
import { type OwnedReportDomain, ownedDomainsTable } from "./owned-report-domains.js";
import { senderNameColumns } from "./sender-naming.js";

const DAY = 86_400;

/** What of a ranking's build the changes since it are read against. */
export interface SenderRankingMarks {
  buildId: string;
  bucket: Span;
  builtSeq: string;
  builtNameSeq: string;
}

/**
 * SQL for one row per (tenant's domain, source IP) changed for a ranking since its build, as the
 * snapshot reading it sees them: the facts of later batches of aggregate_by_sender and those an
 * expiry removed (negated) of `domains` on the bucket's days (agg_sender_delta, numbered after
 * the build), and the addresses the ranking holds of the domains' owners that source_ip_names
 * named otherwise since. Columns: owner, source_ip, the address's naming now (senderNameColumns)
 * and `d_<sum>` for each of senderRankingSums, what the deltas add (zeros for an address only
 * renamed). One definition for the queries' patch and the upkeep's catch-up.
 */
export function changedSenderAddresses(
  ranking: SenderRankingMarks,
  domains: readonly OwnedReportDomain[],
): RawBuilder<unknown> {
  const owners = [...new Set(domains.map((d) => d.owner))];
  const firstDay = Math.floor(ranking.bucket.start / DAY);
  const lastDay = Math.floor(ranking.bucket.end / DAY);
  // The deltas' sums ride along (a full join: a join back to the delta rows, estimated at a row,
  // was a nested loop over them, quadratic in the changes).
  return sql`
    select m.owner, m.source_ip, ip.*, ${sql.join(senderRankingSums.map((k) => sql.ref(`m.d_${k}`)))}
    from (
      select coalesce(dl.owner, rn.owner) as owner, coalesce(dl.source_ip, rn.source_ip) as source_ip,
        ${sql.join(senderRankingSums.map((k) => sql`coalesce(dl.${sql.ref(k)}, 0) as ${sql.ref(`d_${k}`)}`))}
      from (
        select d.owner, x.source_ip, ${senderSumsOf("x")}
        from agg_sender_delta x
        join ${ownedDomainsTable(domains)} as d(domain, owner) on d.domain = x.domain
        where x.seq > ${ranking.builtSeq}::bigint and x.day between ${firstDay} and ${lastDay}
        group by d.owner, x.source_ip
      ) dl
      full join (
        select r.owner, r.source_ip from source_ip_name n
        join sender_ranking_ip r on r.build_id = ${ranking.buildId}::bigint and r.source_ip = n.source_ip
        where n.named_seq > ${ranking.builtNameSeq}::bigint and ${inListedDomains(owners, "r.owner")}
      ) rn on rn.owner = dl.owner and rn.source_ip = dl.source_ip
    ) m
    left join source_ip_name n on n.source_ip = m.source_ip
    cross join lateral (select ${senderNameColumns("n")}) ip`;
}
