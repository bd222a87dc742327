import { inDomains, tenantReportDomains } from "@dmarc-ledger/report-read-models";
import { type Kysely, sql } from "kysely";
import { offsetOf, type PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";

export interface ForensicRecord {
  ForensicId: string;
  Subject: string;
  Domain: string;
  Received: string;
  Amount: string;
  Headers: string;
}

interface ForensicRow {
  forensic_id: string;
  subject: string;
  domain: string;
  received: string;
  amount: string;
  headers: string;
}

/** GET forensic: the failure reports that arrived in the period, newest first. */
export async function forensicReports(
  db: Kysely<QuerySchema>,
  query: PageQuery,
): Promise<{ total: number; records: ForensicRecord[] }> {
  const domains = await tenantReportDomains(db, query.tenantId, query.domain);
  const inPeriod = sql`f.received >= ${query.start} and f.received <= ${query.end}
    and ${inDomains(domains, "f.domain")}`;
  // The page and the count in one statement, so both see the same reports while the projector
  // adds more; not a window count, which would format every report of the period.
  const { rows } = await sql<ForensicRow & { total: string }>`
    with counted as (select count(*)::text as total from forensic_report f where ${inPeriod}),
    page as (
      select f.forensic_id, f.received as received_at, f.subject, f.domain, f.amount, f.headers
      from forensic_report f where ${inPeriod}
      order by f.received desc, f.forensic_id desc
      limit ${query.perPage} offset ${offsetOf(query)})
    select counted.total, page.forensic_id::text as forensic_id, page.subject, page.domain,
      to_char(to_timestamp(page.received_at) at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS') as received,
      page.amount::text as amount, page.headers
    from counted left join page on true
    order by page.received_at desc, page.forensic_id desc`.execute(db);
  const total = Number(rows[0]?.total ?? 0);
  const onPage = rows.filter((row) => row.forensic_id !== null);
  return {
    total,
    records: onPage.map((row) => ({
      ForensicId: row.forensic_id,
      Subject: row.subject,
      Domain: row.domain,
      Received: row.received,
      Amount: row.amount,
      Headers: row.headers,
    })),
  };
}
