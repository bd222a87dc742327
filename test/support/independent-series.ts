import { type Counters, countersOf, type SimpleRow } from "./independent-aggregate.js";

/**
 * The daily series computed again from SimpleRows, for the aggregate_by_date tests: the day
 * split, the buckets (through Date's calendar, not the service's day arithmetic) and the
 * disposition counts written out without the service's code.
 */

const daySeconds = 86_400;

/** A row's messages on one UTC day ("YYYY-MM-DD"). */
export interface DayRow extends SimpleRow {
  date: string;
}

const dateOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

/**
 * The documented rule (docs/api.md, "aggregate_by_date"): a report covering [begin, end) of more
 * than 24 hours is split over the UTC days it touches in proportion to its seconds on each, the
 * rounding by the largest remainder, ties to the earlier day; days left with no message drop
 * out. A report of at most 24 hours counts on the day of its begin.
 */
export function splitOverDays(row: SimpleRow): DayRow[] {
  const length = row.end - row.begin;
  if (length <= daySeconds) return [{ ...row, date: dateOf(row.begin) }];
  const shares: { date: string; whole: bigint; rest: bigint }[] = [];
  let cursor = row.begin;
  while (cursor < row.end) {
    const nextMidnight = (Math.floor(cursor / daySeconds) + 1) * daySeconds;
    const until = Math.min(nextMidnight, row.end);
    const exact = BigInt(row.count) * BigInt(until - cursor);
    shares.push({ date: dateOf(cursor), whole: exact / BigInt(length), rest: exact % BigInt(length) });
    cursor = until;
  }
  let left = BigInt(row.count) - shares.reduce((sum, share) => sum + share.whole, 0n);
  const order = shares.map((_, index) => index);
  order.sort((a, b) =>
    shares[b]!.rest > shares[a]!.rest ? 1 : shares[b]!.rest < shares[a]!.rest ? -1 : a - b,
  );
  for (const index of order) {
    if (left === 0n) break;
    shares[index]!.whole += 1n;
    left -= 1n;
  }
  return shares
    .filter((share) => share.whole > 0n)
    .map((share) => ({ ...row, count: Number(share.whole), date: share.date }));
}

export type Bucket = "day" | "week" | "month";

/** The first day of the bucket holding `date`, by the calendar of Date. */
export function bucketOf(date: string, bucket: Bucket): string {
  const day = new Date(`${date}T00:00:00Z`);
  if (bucket === "month") day.setUTCDate(1);
  if (bucket === "week") day.setUTCDate(day.getUTCDate() - ((day.getUTCDay() + 6) % 7));
  return day.toISOString().slice(0, 10);
}

/** Every bucket's first day from the bucket of `from` to the bucket of `to` (dates, inclusive). */
export function bucketsBetween(from: string, to: string, bucket: Bucket): string[] {
  const dates: string[] = [];
  const cursor = new Date(`${bucketOf(from, bucket)}T00:00:00Z`);
  const last = bucketOf(to, bucket);
  for (;;) {
    const date = cursor.toISOString().slice(0, 10);
    if (date > last) return dates;
    dates.push(date);
    if (bucket === "day") cursor.setUTCDate(cursor.getUTCDate() + 1);
    else if (bucket === "week") cursor.setUTCDate(cursor.getUTCDate() + 7);
    else cursor.setUTCMonth(cursor.getUTCMonth() + 1);
  }
}

export interface SeriesRecord extends Counters {
  Date: string;
  DispositionNone: string;
  DispositionQuarantine: string;
  DispositionReject: string;
}

/**
 * The series of `rows` over the buckets holding [start, end] (Unix seconds): each bucket with
 * all the messages of its days (a bucket the period cuts is whole), zeros where there are none.
 */
export function expectedSeries(
  rows: SimpleRow[],
  start: number,
  end: number,
  bucket: Bucket,
): SeriesRecord[] {
  const parts = rows.flatMap(splitOverDays);
  return bucketsBetween(dateOf(start), dateOf(end), bucket).map((first) => {
    const inBucket = parts.filter((part) => bucketOf(part.date, bucket) === first);
    const disposition = (word: string) =>
      String(inBucket.filter((part) => part.disposition === word).reduce((sum, part) => sum + part.count, 0));
    return {
      Date: first,
      ...countersOf(inBucket),
      DispositionNone: disposition("none"),
      DispositionQuarantine: disposition("quarantine"),
      DispositionReject: disposition("reject"),
    };
  });
}
