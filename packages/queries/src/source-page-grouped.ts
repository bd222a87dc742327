import type { RankingScope, TenantReportDomain } from "@dmarc-ledger/report-read-models";
import { senderOf, sourceFactSums, tenantScopedFacts } from "@dmarc-ledger/report-read-models";
import { type Kysely, sql } from "kysely";
import { offsetOf, type PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";
import { type SourceGroupSums, sourceOrder, sourceSumsAsText } from "./source-group-sums.js";

/**
 * The facts of the sender's addresses only (query.sender), named as aggregate_by_sender names
 * them (senderOf over source_ip_name; an address without a row is "unknown"); else every fact.
 */
const ofSender = (query: PageQuery) =>
  query.sender === undefined ? sql`true` : sql`${senderOf("n")} = ${query.sender}`;

/**
 * A page of source groups computed the plain way: every group of the period summed and sorted.
 * Exact for any period; used when no ranking is close enough to it, and for one sender's sources.
 */
export async function groupedSourcePage(
  db: Kysely<QuerySchema>,
  query: PageQuery,
  scope: RankingScope,
  domains: readonly TenantReportDomain[],
): Promise<{ total: number; rows: SourceGroupSums[] }> {
  const grouped = sql`select ${sourceFactSums} from agg_source f
    ${query.sender === undefined ? sql`` : sql`left join source_ip_name n on n.source_ip = f.source_ip`}
    where f.t between ${query.start} and ${query.end} and ${tenantScopedFacts(domains, scope)}
      and ${ofSender(query)}
    group by f.domain, f.source_ip, f.organization`;
  const { rows } = await sql<SourceGroupSums & { total: string }>`
    with grouped as (${grouped})
    select ${sourceSumsAsText("g")}, count(*) over () as total from grouped g
    order by ${sourceOrder("g", "forward")}
    limit ${query.perPage} offset ${offsetOf(query)}`.execute(db);
  if (rows.length > 0) return { total: Number(rows[0]!.total), rows };
  const counted = await sql<{ n: string }>`select count(*) as n from (${grouped}) g`.execute(db);
  return { total: Number(counted.rows[0]?.n ?? 0), rows: [] };
}
