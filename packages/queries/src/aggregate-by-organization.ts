import type { CounterFields } from "@dmarc-ledger/report-read-models";
import { inDomains, tenantReportDomains } from "@dmarc-ledger/report-read-models";
import { type Kysely, sql } from "kysely";
import { counterSelect, toCounterFields } from "./counter-columns.js";
import { groupedPage } from "./grouped-page.js";
import type { Page, PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";

export interface AggregateByOrganizationRecord extends CounterFields {
  Organization: string;
}

/** GET aggregate_by_organization: one record per reporting organisation over the tenant's domains. */
export async function aggregateByOrganization(
  db: Kysely<QuerySchema>,
  query: PageQuery,
): Promise<Page<AggregateByOrganizationRecord>> {
  const domains = await tenantReportDomains(db, query.tenantId, query.domain);
  const { total, rows } = await groupedPage(
    db,
    query,
    sql`select o.organization as key, ${counterSelect("o")}
      from agg_organization o
      where o.t >= ${query.start} and o.t <= ${query.end} and ${inDomains(domains, "o.domain")}
      group by o.organization`,
  );
  return { total, records: rows.map((row) => ({ Organization: row.key, ...toCounterFields(row) })) };
}
