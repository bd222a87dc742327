import { type Kysely, sql } from "kysely";
import type { ReadModelSchema } from "../schema.js";
import type { RankingScope } from "../source-rankings/ranking-scope.js";
import { offsetOf, type PageQuery } from "./page.js";
import { tenantScopedFacts } from "./source-facts.js";
import { type SourceGroupSums, sourceFactSums, sourceOrder, sourceSumsAsText } from "./source-group-sums.js";

/**
 * A page of source groups computed the plain way: every group of the period summed and sorted.
 * Exact for any period; used when no ranking is close enough to it.
 */
export async function groupedSourcePage(
  db: Kysely<ReadModelSchema>,
  query: PageQuery,
  scope: RankingScope,
): Promise<{ total: number; rows: SourceGroupSums[] }> {
  const grouped = sql`select ${sourceFactSums} from agg_source f
    where f.t between ${query.start} and ${query.end} and ${tenantScopedFacts(query.tenantId, scope)}
    group by f.domain, f.source_ip, f.organization`;
  // A year of sources is millions of groups to hash: with this much memory fewer spill to disk.
  // Set for this query's transaction only.
  return db.transaction().execute(async (trx) => {
    await sql`set local work_mem = '64MB'`.execute(trx);
    const { rows } = await sql<SourceGroupSums & { total: string }>`
      with grouped as (${grouped})
      select ${sourceSumsAsText("g")}, count(*) over () as total from grouped g
      order by ${sourceOrder("g", "forward")}
      limit ${query.perPage} offset ${offsetOf(query)}`.execute(trx);
    if (rows.length > 0) return { total: Number(rows[0]!.total), rows };
    const counted = await sql<{ n: string }>`select count(*) as n from (${grouped}) g`.execute(trx);
    return { total: Number(counted.rows[0]?.n ?? 0), rows: [] };
  });
}
