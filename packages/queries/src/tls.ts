import { inDomains, tenantReportDomains } from "@dmarc-ledger/report-read-models";
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { DateSeriesQuery } from "./aggregate-by-date.js";
import { type BucketRange, bucketRange, dateOfDay } from "./date-buckets.js";
import { offsetOf, type Page, type PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";

/** GET tls_by_domain: one record per policy domain and policy type. Counts are decimal strings. */
export interface TlsByDomainRecord {
  Domain: string;
  /** sts, tlsa, no-policy-found, or a reporter's own word as it sent it. */
  PolicyType: string;
  Reports: string;
  /** Successful + Failed. */
  Sessions: string;
  Successful: string;
  Failed: string;
}

/** GET tls_failures: one record per failure-details key; "" for a field the report left out. */
export interface TlsFailureRecord {
  Domain: string;
  PolicyType: string;
  ResultType: string;
  SendingMtaIp: string;
  ReceivingMxHostname: string;
  ReceivingIp: string;
  /** The report's organization-name, as sent. */
  Organization: string;
  FailedSessions: string;
}

/** GET tls_by_date: one record per bucket of the period, every bucket present. */
export interface TlsByDateRecord {
  /** The bucket's first day, "YYYY-MM-DD" (UTC). */
  Date: string;
  Reports: string;
  Sessions: string;
  Successful: string;
  Failed: string;
}

/** One page of a grouped statement (its `order by` given), with the number of groups over all pages. */
async function pageOf<Row>(
  db: Kysely<QuerySchema>,
  query: PageQuery,
  grouped: RawBuilder<unknown>,
  order: RawBuilder<unknown>,
): Promise<{ total: number; rows: Row[] }> {
  const { rows } = await sql<Row & { total: string }>`
    with grouped as (${grouped})
    select grouped.*, count(*) over () as total from grouped
    order by ${order}
    limit ${query.perPage} offset ${offsetOf(query)}`.execute(db);
  if (rows.length > 0)
    return { total: Number(rows[0]!.total), rows: rows.map(({ total: _, ...row }) => row as Row) };
  const counted = await sql<{
    n: string;
  }>`with grouped as (${grouped}) select count(*) as n from grouped`.execute(db);
  return { total: Number(counted.rows[0]?.n ?? 0), rows: [] };
}

/** By Sessions descending, then Domain and PolicyType (bytewise). */
export async function tlsByDomain(
  db: Kysely<QuerySchema>,
  query: PageQuery,
): Promise<Page<TlsByDomainRecord>> {
  const domains = await tenantReportDomains(db, query.tenantId, query.domain);
  if (domains.length === 0) return { total: 0, records: [] };
  const { total, rows } = await pageOf<TlsByDomainRecord>(
    db,
    query,
    sql`select f.domain as "Domain", f.policy_type as "PolicyType", sum(f.reports)::text as "Reports",
        sum(f.successful + f.failed)::text as "Sessions", sum(f.successful)::text as "Successful",
        sum(f.failed)::text as "Failed"
      from tls_policy_fact f
      where f.t >= ${query.start} and f.t <= ${query.end} and ${inDomains(domains, "f.domain")}
      group by f.domain, f.policy_type`,
    sql`grouped."Sessions"::numeric desc, grouped."Domain" collate "C", grouped."PolicyType" collate "C"`,
  );
  return { total, records: rows };
}

/** By FailedSessions descending, then every key field in the record's order (bytewise). */
export async function tlsFailures(
  db: Kysely<QuerySchema>,
  query: PageQuery,
): Promise<Page<TlsFailureRecord>> {
  const domains = await tenantReportDomains(db, query.tenantId, query.domain);
  if (domains.length === 0) return { total: 0, records: [] };
  const { total, rows } = await pageOf<TlsFailureRecord>(
    db,
    query,
    sql`select f.domain as "Domain", f.policy_type as "PolicyType", f.result_type as "ResultType",
        f.sending_mta_ip as "SendingMtaIp", f.receiving_mx_hostname as "ReceivingMxHostname",
        f.receiving_ip as "ReceivingIp", f.organization as "Organization",
        sum(f.failed)::text as "FailedSessions"
      from tls_failure_fact f
      where f.t >= ${query.start} and f.t <= ${query.end} and ${inDomains(domains, "f.domain")}
      group by 1, 2, 3, 4, 5, 6, 7`,
    sql`grouped."FailedSessions"::numeric desc, grouped."Domain" collate "C", grouped."PolicyType" collate "C",
      grouped."ResultType" collate "C", grouped."SendingMtaIp" collate "C",
      grouped."ReceivingMxHostname" collate "C", grouped."ReceivingIp" collate "C",
      grouped."Organization" collate "C"`,
  );
  return { total, records: rows };
}

/** The bucket of a tls_policy_fact row's t, as the day number of its first day. */
function bucketOf(query: DateSeriesQuery): RawBuilder<number> {
  const day = sql<number>`(f.t / 86400)::integer`;
  if (query.bucket === "day") return day;
  // Day 0 (1970-01-01) was a Thursday; t is never negative.
  if (query.bucket === "week") return sql<number>`${day} - (${day} + 3) % 7`;
  return sql<number>`(date_trunc('month', (date '1970-01-01' + ${day})::timestamp)::date - date '1970-01-01')`;
}

/**
 * GET tls_by_date: per UTC day, ISO week or calendar month of the period, oldest first, every
 * bucket present, as aggregate_by_date: a bucket holds all of its days. `total` is the number of
 * buckets; the caller refuses periods of more than maxBuckets.
 */
export async function tlsByDate(
  db: Kysely<QuerySchema>,
  query: DateSeriesQuery,
  range: BucketRange = bucketRange(query.start, query.end, query.bucket),
): Promise<Page<TlsByDateRecord>> {
  const from = Math.min(offsetOf(query), range.count);
  const to = Math.min(from + query.perPage, range.count);
  if (from === to) return { total: range.count, records: [] };
  let domains = await tenantReportDomains(db, query.tenantId, query.domain);
  if (query.group !== undefined) domains = domains.filter((owner) => owner.group === query.group);
  type Row = { bucket: number; reports: string; successful: string; failed: string; sessions: string };
  const rows =
    domains.length === 0
      ? []
      : (
          await sql<Row>`select ${bucketOf(query)} as bucket, sum(f.reports)::text as reports,
              sum(f.successful)::text as successful, sum(f.failed)::text as failed,
              sum(f.successful + f.failed)::text as sessions
            from tls_policy_fact f
            where f.t >= ${range.startOf(from) * 86_400} and f.t < ${range.startOf(to) * 86_400}
              and ${inDomains(domains, "f.domain")}
            group by 1`.execute(db)
        ).rows;
  const byBucket = new Map(rows.map((row) => [Number(row.bucket), row]));
  const records: TlsByDateRecord[] = [];
  for (let index = from; index < to; index++) {
    const day = range.startOf(index);
    const row = byBucket.get(day);
    records.push({
      Date: dateOfDay(day),
      Reports: row?.reports ?? "0",
      Sessions: row?.sessions ?? "0",
      Successful: row?.successful ?? "0",
      Failed: row?.failed ?? "0",
    });
  }
  return { total: range.count, records };
}
