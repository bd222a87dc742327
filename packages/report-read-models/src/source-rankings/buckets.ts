/** A span of Unix seconds, both ends inclusive (the API's periods are too). */
export interface Span {
  start: number;
  end: number;
}

const utcSeconds = (year: number, month: number) => Date.UTC(year, month, 1) / 1000;

/**
 * The UTC calendar months and years that overlap `span`: the buckets source rankings are kept
 * for. Months serve 30-day questions, years 365-day ones; a request is answered from the bucket
 * closest to it, corrected exactly for the seconds where they differ.
 */
export function calendarBuckets(span: Span): Span[] {
  const buckets: Span[] = [];
  const first = new Date(span.start * 1000);
  const last = new Date(span.end * 1000);
  for (let year = first.getUTCFullYear(); year <= last.getUTCFullYear(); year++) {
    buckets.push({ start: utcSeconds(year, 0), end: utcSeconds(year + 1, 0) - 1 });
    const fromMonth = year === first.getUTCFullYear() ? first.getUTCMonth() : 0;
    const toMonth = year === last.getUTCFullYear() ? last.getUTCMonth() : 11;
    for (let month = fromMonth; month <= toMonth; month++) {
      buckets.push({ start: utcSeconds(year, month), end: utcSeconds(year, month + 1) - 1 });
    }
  }
  return buckets;
}

/** The spans in exactly one of `a` and `b` (at most two). */
export function symmetricDifference(a: Span, b: Span): Span[] {
  const spans: Span[] = [];
  const add = (start: number, end: number) => {
    if (start <= end) spans.push({ start, end });
  };
  if (a.end < b.start || b.end < a.start) return [a, b];
  add(Math.min(a.start, b.start), Math.max(a.start, b.start) - 1);
  add(Math.min(a.end, b.end) + 1, Math.max(a.end, b.end));
  return spans;
}

export const secondsIn = (spans: readonly Span[]) =>
  spans.reduce((sum, span) => sum + (span.end - span.start + 1), 0);

const DAY = 86_400;

/** How many days the rolling buckets span. */
export const rollingDays = [30, 365] as const;

/**
 * The last 30 and the last 365 whole UTC days before `now`: the API's default period is the last
 * 30 days up to the second, and clients ask for the last year as often as for calendar years.
 * They move every day: their rankings are moved on with them (the days that leave taken out, the
 * day that comes added), not built again.
 */
export function rollingBuckets(now: number): Span[] {
  return rollingDays.map((days) => rollingBucket(now, days));
}

/** The last `days` whole UTC days before `now`. */
export function rollingBucket(now: number, days: number): Span {
  const today = Math.floor(now / DAY) * DAY;
  return { start: today - days * DAY, end: today - 1 };
}

/** The whole days a span covers (rolling buckets are whole days). */
export const daysIn = (span: Span) => Math.round((span.end - span.start + 1) / DAY);

export const sameSpan = (a: Span, b: Span) => a.start === b.start && a.end === b.end;
