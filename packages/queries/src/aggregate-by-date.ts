import type { CounterFields } from "@dmarc-ledger/report-read-models";
import { inDomains, tenantDayRows, tenantReportDomains } from "@dmarc-ledger/report-read-models";
import { type Kysely, type RawBuilder, sql } from "kysely";
import { type CounterColumns, counterSelect, toCounterFields } from "./counter-columns.js";
import { type BucketRange, bucketRange, type DateBucket, dateOfDay } from "./date-buckets.js";
import { offsetOf, type Page, type PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";

export interface AggregateByDateRecord extends CounterFields {
  /** The bucket's first day, "YYYY-MM-DD" (UTC). */
  Date: string;
  DispositionNone: string;
  DispositionQuarantine: string;
  DispositionReject: string;
}

export interface DateSeriesQuery extends PageQuery {
  bucket: DateBucket;
  /** Only the tenant's domains in this group now (and their subdomains' reports). */
  group?: string;
}

/** The bucket of an agg_domain_day row (`a.day`), as the day number of its first day. */
function bucketOfDay(bucket: DateBucket): RawBuilder<number> {
  if (bucket === "day") return sql<number>`a.day`;
  // Day 0 (1970-01-01) was a Thursday; days are never negative (periods start at 0 or later).
  if (bucket === "week") return sql<number>`a.day - (a.day + 3) % 7`;
  // A plain timestamp: date_trunc on a date would take the session's time zone.
  return sql<number>`(date_trunc('month', (date '1970-01-01' + a.day)::timestamp)::date - date '1970-01-01')`;
}

const zeros = {
  ...toCounterFields(emptyColumns()),
  DispositionNone: "0",
  DispositionQuarantine: "0",
  DispositionReject: "0",
};

function emptyColumns(): CounterColumns {
  return {
    volume: "0",
    dmarc: "0",
    dmarc_unaligned: "0",
    dmarc_unaligned_arc_pass: "0",
    dkim_aligned: "0",
    dkim: "0",
    dkim_failed: "0",
    spf_aligned: "0",
    spf: "0",
    spf_failed: "0",
  };
}

/**
 * GET aggregate_by_date: one record per bucket (UTC day, ISO week or calendar month) of the
 * period, oldest first, every bucket present (zeros where no mail was reported). A bucket holds
 * all of its days, also when the period starts or ends inside it: the series is of whole days,
 * weeks or months (agg_domain_day has no finer time). `total` is the number of buckets. The
 * caller refuses periods of more than maxBuckets.
 */
export async function aggregateByDate(
  db: Kysely<QuerySchema>,
  query: DateSeriesQuery,
  range: BucketRange = bucketRange(query.start, query.end, query.bucket),
  /** ignoreDayTotals: sum agg_domain_day even for the whole tenant (tests compare the two). */
  options: { ignoreDayTotals?: boolean } = {},
): Promise<Page<AggregateByDateRecord>> {
  const from = Math.min(offsetOf(query), range.count);
  const to = Math.min(from + query.perPage, range.count);
  if (from === to) return { total: range.count, records: [] };
  const firstDay = range.startOf(from);
  const afterLastDay = range.startOf(to);
  const bucket = bucketOfDay(query.bucket);
  type Row = CounterColumns & { bucket: number; none: string; quarantine: string; reject: string };
  const summed = (from: RawBuilder<unknown>) => sql<Row>`
    select ${bucket} as bucket, ${counterSelect("a")},
      sum(a.disposition_none)::text as none,
      sum(a.disposition_quarantine)::text as quarantine,
      sum(a.disposition_reject)::text as reject
    from ${from} a
    group by 1`;
  // All of the tenant's domains: from its day totals (tenant-day-totals.ts) in one snapshot,
  // unless they count other domains (or, the same answer, the period has no reports). A
  // filtered series is summed from agg_domain_day.
  let rows: Row[] = [];
  if (!options.ignoreDayTotals && query.domain === undefined && query.group === undefined) {
    rows = await db
      .transaction()
      .setIsolationLevel("repeatable read")
      .execute(async (trx) => {
        const domains = (await tenantReportDomains(trx, query.tenantId)).map((d) => d.domain);
        const kept = await tenantDayRows(trx, query.tenantId, domains, firstDay, afterLastDay);
        return kept ? (await summed(sql`(${kept})`).execute(trx)).rows : [];
      });
  }
  if (rows.length === 0) rows = await groupedDayRows();
  async function groupedDayRows(): Promise<Row[]> {
    let domains = await tenantReportDomains(db, query.tenantId, query.domain);
    if (query.group !== undefined) domains = domains.filter((owner) => owner.group === query.group);
    if (domains.length === 0) return [];
    return (
      await summed(
        sql`(select * from agg_domain_day d where d.day >= ${firstDay} and d.day < ${afterLastDay}
          and ${inDomains(domains, "d.domain")})`,
      ).execute(db)
    ).rows;
  }
  const byBucket = new Map(rows.map((row) => [Number(row.bucket), row]));
  const records: AggregateByDateRecord[] = [];
  for (let index = from; index < to; index++) {
    const day = range.startOf(index);
    const row = byBucket.get(day);
    records.push({
      Date: dateOfDay(day),
      ...(row
        ? {
            ...toCounterFields(row),
            DispositionNone: row.none,
            DispositionQuarantine: row.quarantine,
            DispositionReject: row.reject,
          }
        : zeros),
    });
  }
  return { total: range.count, records };
}

/** Whether any of the tenant's domains is in `group` now (a filter by an unknown group is refused). */
export async function tenantHasGroup(
  db: Kysely<QuerySchema>,
  tenantId: string,
  group: string,
): Promise<boolean> {
  const found = await db
    .selectFrom("domain")
    .select("domain")
    .where("tenant_id", "=", tenantId)
    .where("group_name", "=", group)
    .limit(1)
    .executeTakeFirst();
  return found !== undefined;
}
