import { type Kysely, sql } from "kysely";
import type { ReadModelSchema } from "../schema.js";
import { offsetOf, type PageQuery } from "./page.js";
import { inDomains, tenantReportDomains } from "./tenant-domain-filter.js";

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
  db: Kysely<ReadModelSchema>,
  query: PageQuery,
): Promise<{ total: number; records: ForensicRecord[] }> {
  const domains = await tenantReportDomains(db, query.tenantId);
  const inPeriod = sql`f.received >= ${query.start} and f.received <= ${query.end}
    and ${inDomains(domains, "f.domain")}`;
  // The page and the count separately: a window count would format every report of the period.
  const { rows } = await sql<ForensicRow>`
    select f.forensic_id::text as forensic_id, f.subject, f.domain,
      to_char(to_timestamp(f.received) at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS') as received,
      f.amount::text as amount, f.headers
    from forensic_report f where ${inPeriod}
    order by f.received desc, f.forensic_id desc
    limit ${query.perPage} offset ${offsetOf(query)}`.execute(db);
  const counted = await sql<{
    n: string;
  }>`select count(*)::text as n from forensic_report f where ${inPeriod}`.execute(db);
  const total = Number(counted.rows[0]?.n ?? 0);
  return {
    total,
    records: rows.map((row) => ({
      ForensicId: row.forensic_id,
      Subject: row.subject,
      Domain: row.domain,
      Received: row.received,
      Amount: row.amount,
      Headers: row.headers,
    })),
  };
}
