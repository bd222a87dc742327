/**
 * The buckets of the daily series (GET aggregate_by_date): UTC days, ISO weeks (from Monday) and
 * calendar months, each named by its first day. Days are counted from 1970-01-01, a Thursday.
 */
export type DateBucket = "day" | "week" | "month";

export const dateBuckets: readonly DateBucket[] = ["day", "week", "month"];

/** The most buckets one period may have: the refusal names the coarser bucket to ask for. */
export const maxBuckets = 1000;

const DAY = 86_400;

/** The UTC day of a Unix time, in days since 1970-01-01. */
export const dayOfTime = (seconds: number) => Math.floor(seconds / DAY);

/** "YYYY-MM-DD" of a day number. */
export const dateOfDay = (day: number) => new Date(day * DAY * 1000).toISOString().slice(0, 10);

/**
 * Months since January 1970 of a day number, by arithmetic (the civil-from-days algorithm of
 * H. Hinnant's "chrono-compatible low-level date algorithms"): it holds for days Date cannot name.
 */
function monthIndexOf(day: number): number {
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const month = shiftedMonth < 10 ? shiftedMonth + 2 : shiftedMonth - 10;
  const year = yearOfEra + era * 400 + (month < 2 ? 1 : 0);
  return (year - 1970) * 12 + month;
}

/** The first day of a month counted from January 1970 (days-from-civil, the same source). */
function firstDayOfMonthIndex(monthIndex: number): number {
  const month = ((monthIndex % 12) + 12) % 12;
  const year = 1970 + Math.floor(monthIndex / 12) - (month < 2 ? 1 : 0);
  const era = Math.floor(year / 400);
  const yearOfEra = year - era * 400;
  const dayOfYear = Math.floor((153 * (month > 1 ? month - 2 : month + 10) + 2) / 5);
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** The first day of the bucket that holds `day`. */
export function bucketStart(day: number, bucket: DateBucket): number {
  if (bucket === "day") return day;
  // 1970-01-01 (day 0) was a Thursday: Monday is 3 days before it.
  if (bucket === "week") return day - ((((day + 3) % 7) + 7) % 7);
  return firstDayOfMonthIndex(monthIndexOf(day));
}

/** The first day of the `index`-th bucket from the one that starts on `first`. */
function nthBucket(first: number, index: number, bucket: DateBucket): number {
  if (bucket === "day") return first + index;
  if (bucket === "week") return first + 7 * index;
  return firstDayOfMonthIndex(monthIndexOf(first) + index);
}

/** The buckets of a period: the first's start day, how many, and each one's first day by index. */
export interface BucketRange {
  bucket: DateBucket;
  /** First day of the first bucket (which may start before the period). */
  first: number;
  count: number;
  /** First day of the bucket at this index (0-based); index `count` is the day after the last. */
  startOf(index: number): number;
}

/** The buckets that hold any second of [start, end]. */
export function bucketRange(start: number, end: number, bucket: DateBucket): BucketRange {
  const firstDay = dayOfTime(start);
  const lastDay = dayOfTime(end);
  const first = bucketStart(firstDay, bucket);
  const days = lastDay - firstDay + 1;
  let count: number;
  if (bucket === "day") count = days;
  else if (bucket === "week") count = (bucketStart(lastDay, "week") - first) / 7 + 1;
  else count = monthIndexOf(lastDay) - monthIndexOf(firstDay) + 1;
  return { bucket, first, count, startOf: (index) => nthBucket(first, index, bucket) };
}

/** The next coarser bucket, or null for months. */
export const coarserBucket = (bucket: DateBucket): DateBucket | null =>
  bucket === "day" ? "week" : bucket === "week" ? "month" : null;
