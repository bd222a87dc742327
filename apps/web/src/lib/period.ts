/** The periods the picker offers; `custom` reads `from` and `to` (YYYY-MM-DD, UTC, inclusive). */
export const presets = ["7d", "30d", "90d", "365d", "all"] as const;

/** The first day of "all time": the API's, Unix time 0 (a report may claim any date). */
export const allTimeFrom = "1970-01-01";
export type Preset = (typeof presets)[number];

export interface PeriodChoice {
  period: Preset | "custom";
  from?: string;
  to?: string;
}

/** A resolved period in the API's terms: Unix seconds, both inclusive, whole UTC days. */
export interface Period {
  start: number;
  end: number;
  /** The first and last day, YYYY-MM-DD (UTC). */
  from: string;
  to: string;
  days: number;
}

const day = 86_400;
const isoDay = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);
const dayStart = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000;
const validDate = (value: string | undefined): value is string =>
  typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(dayStart(value));

/**
 * The period a choice means on `today`: the last N whole UTC days up to the end of today, every
 * day ("all"), or the custom days. Whole days make a shared link mean the same period all day long, and the API's
 * answer for it the same for everyone. An unusable choice falls back to the last 30 days.
 */
export function resolvePeriod(choice: PeriodChoice, now: Date = new Date()): Period {
  const todayStart = dayStart(now.toISOString().slice(0, 10));
  if (choice.period === "custom" && validDate(choice.from) && validDate(choice.to)) {
    const [a, b] = [dayStart(choice.from), dayStart(choice.to)].sort((x, y) => x - y) as [number, number];
    return { start: a, end: b + day - 1, from: isoDay(a), to: isoDay(b), days: (b - a) / day + 1 };
  }
  if (choice.period === "all") {
    const start = dayStart(allTimeFrom);
    return {
      start,
      end: todayStart + day - 1,
      from: allTimeFrom,
      to: isoDay(todayStart),
      days: (todayStart - start) / day + 1,
    };
  }
  const days = choice.period === "custom" ? 30 : Number.parseInt(choice.period, 10) || 30;
  const start = todayStart - (days - 1) * day;
  return { start, end: todayStart + day - 1, from: isoDay(start), to: isoDay(todayStart), days };
}

/** The buckets of GET aggregate_by_date, and the most buckets it serves for one period. */
export type SeriesBucket = "day" | "week" | "month";
const maxBuckets = 1000;

/**
 * The finest bucket the API serves the period in: days up to 1,000 of them, then weeks (a week
 * more for the ones the period cuts), then months.
 */
export function seriesBucket(period: Period): SeriesBucket {
  if (period.days <= maxBuckets) return "day";
  return Math.ceil(period.days / 7) + 1 <= maxBuckets ? "week" : "month";
}

/** The period of the same length just before: what trends compare with. */
export function previousPeriod(period: Period): Period {
  const length = period.end - period.start + 1;
  const start = period.start - length;
  const end = period.start - 1;
  return { start, end, from: isoDay(start), to: isoDay(end), days: period.days };
}

/** "1 Nov 2026 – 30 Nov 2026", "all time, to 30 Nov 2026" */
export function describePeriod(period: Period): string {
  const format = (date: string) =>
    new Date(`${date}T00:00:00Z`).toLocaleDateString("en-GB", {
      day: "numeric",
      month: "short",
      year: "numeric",
      timeZone: "UTC",
    });
  if (period.from === allTimeFrom) return `all time, to ${format(period.to)}`;
  return period.from === period.to ? format(period.from) : `${format(period.from)} – ${format(period.to)}`;
}

export function parsePeriodChoice(params: URLSearchParams): PeriodChoice {
  const raw = params.get("period");
  const period =
    raw === "custom" || presets.includes(raw as Preset) ? (raw as PeriodChoice["period"]) : "30d";
  const from = params.get("from") ?? undefined;
  const to = params.get("to") ?? undefined;
  return { period, ...(from ? { from } : {}), ...(to ? { to } : {}) };
}
