import type { CounterFields } from "@dmarc-ledger/report-read-models";
import { inDomains, tenantReportDomains } from "@dmarc-ledger/report-read-models";
import { type Kysely, sql } from "kysely";
import { counterSelect, toCounterFields } from "./counter-columns.js";
import { groupedPage } from "./grouped-page.js";
import type { Page, PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";

export interface AggregateByDomainRecord extends CounterFields {
  Domain: string;
}

/** GET aggregate_by_domain: one record per policy domain, by Volume descending then Domain. */
export async function aggregateByDomain(
  db: Kysely<QuerySchema>,
  query: PageQuery,
): Promise<Page<AggregateByDomainRecord>> {
  const domains = await tenantReportDomains(db, query.tenantId, query.domain);
  const { total, rows } = await groupedPage(
    db,
    query,
    sql`select a.domain as key, ${counterSelect("a")}
      from agg_domain a
      where a.t >= ${query.start} and a.t <= ${query.end} and ${inDomains(domains, "a.domain")}
      group by a.domain`,
  );
  return { total, records: rows.map((row) => ({ Domain: row.key, ...toCounterFields(row) })) };
}
