import type { CounterFields } from "@dmarc-ledger/report-read-models";
import { tenantReportDomains } from "@dmarc-ledger/report-read-models";
import { type Kysely, sql } from "kysely";
import { counterSelect, toCounterFields } from "./counter-columns.js";
import { groupedPage } from "./grouped-page.js";
import type { Page, PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";

export interface AggregateByDomainGroupRecord extends CounterFields {
  DomainGroup: string;
}

/**
 * GET aggregate_by_domain_group: one record per group, by the group each domain is in now (so a
 * regrouping applies to history). A row of a subdomain counts for the group of the most specific
 * of the tenant's domains above it; domains in no group are left out.
 */
export async function aggregateByDomainGroup(
  db: Kysely<QuerySchema>,
  query: PageQuery,
): Promise<Page<AggregateByDomainGroupRecord>> {
  const owners = (await tenantReportDomains(db, query.tenantId, query.domain)).filter(
    (owner) => owner.group !== null,
  );
  const { total, rows } = await groupedPage(
    db,
    query,
    sql`select owner.group_name as key, ${counterSelect("a")}
      from agg_domain a
      join unnest(${owners.map((o) => o.domain)}::text[], ${owners.map((o) => o.group)}::text[])
        as owner(domain, group_name) on owner.domain = a.domain
      where a.t >= ${query.start} and a.t <= ${query.end}
      group by owner.group_name`,
  );
  return { total, records: rows.map((row) => ({ DomainGroup: row.key, ...toCounterFields(row) })) };
}
