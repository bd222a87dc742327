import { type Kysely, sql } from "kysely";
import type { CounterFields } from "../counters.js";
import type { ReadModelSchema } from "../schema.js";
import { counterSelect, toCounterFields } from "./counter-columns.js";
import { groupedPage } from "./grouped-page.js";
import type { Page, PageQuery } from "./page.js";

export interface AggregateByDomainGroupRecord extends CounterFields {
  DomainGroup: string;
}

/**
 * GET aggregate_by_domain_group: one record per group, by the group each domain is in now (so a
 * regrouping applies to history). A row of a subdomain counts for the group of the most specific
 * of the tenant's domains above it; domains in no group are left out.
 */
export async function aggregateByDomainGroup(
  db: Kysely<ReadModelSchema>,
  query: PageQuery,
): Promise<Page<AggregateByDomainGroupRecord>> {
  const { total, rows } = await groupedPage(
    db,
    query,
    sql`select owner.group_name as key, ${counterSelect("a", "summed")}
      from agg_domain a
      join lateral (
        select d.group_name from domain d
        where d.tenant_id = ${query.tenantId}
          and (a.domain = d.domain or right(a.domain, length(d.domain) + 1) = '.' || d.domain)
        order by length(d.domain) desc limit 1
      ) owner on true
      where a.t >= ${query.start} and a.t <= ${query.end} and owner.group_name is not null
      group by owner.group_name`,
  );
  return { total, records: rows.map((row) => ({ DomainGroup: row.key, ...toCounterFields(row) })) };
}
