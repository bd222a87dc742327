/**
 * The counts this example keeps, and how each event changes them. Everything here follows from
 * docs/api.md: the feed's events, and how aggregate_by_date counts a report's days.
 */

/** The JSON file's content. */
export interface State {
  /** Where the tail resumes (GET events' cursor; for NATS, the stream sequence as well). */
  cursor: string | null;
  natsSequence: number;
  /** The tenant's domains now. */
  owned: string[];
  /** Per report event id: its report domain and messages per UTC day (YYYY-MM-DD). */
  reports: Record<string, { domain: string; days: Record<string, number> }>;
  /** Per domain, the first day still kept after aggregate retention (AggregateFactsExpired). */
  expiredBefore: Record<string, string>;
}

export const emptyState = (): State => ({
  cursor: null,
  natsSequence: 0,
  owned: [],
  reports: {},
  expiredBefore: {},
});

export interface FeedEvent {
  id: string;
  type: string;
  cursor: string;
  data: Record<string, unknown>;
}

interface AggregateReport {
  begin: number;
  end: number;
  policy: { domain: string };
  rows: { count: number }[];
}

const DAY = 86_400;
const dayOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

/**
 * A row's messages over the UTC days of its report (docs/api.md, aggregate_by_date): a report of
 * at most 24 hours counts on the day of its begin; a longer one is split in proportion to its
 * seconds on each day, by the largest remainder, ties to the earlier day.
 */
export function spreadOverDays(begin: number, end: number, count: number): [string, number][] {
  const total = end - begin;
  if (!(total > DAY)) return [[dayOf(begin), count]];
  const parts: { day: string; count: number; remainder: bigint }[] = [];
  for (let dayStart = Math.floor(begin / DAY) * DAY; dayStart < end; dayStart += DAY) {
    const seconds = Math.min(end, dayStart + DAY) - Math.max(begin, dayStart);
    const share = BigInt(count) * BigInt(seconds);
    parts.push({
      day: dayOf(dayStart),
      count: Number(share / BigInt(total)),
      remainder: share % BigInt(total),
    });
  }
  let missing = count - parts.reduce((sum, part) => sum + part.count, 0);
  const order = parts
    .map((part, index) => ({ part, index }))
    .sort((a, b) =>
      b.part.remainder > a.part.remainder ? 1 : b.part.remainder < a.part.remainder ? -1 : a.index - b.index,
    );
  for (const { part } of order) {
    if (missing <= 0) break;
    part.count++;
    missing--;
  }
  return parts.filter((part) => part.count > 0).map((part) => [part.day, part.count]);
}

/** Whether `domain` is one of `owned` or a subdomain of one. */
export const isUnder = (domain: string, owned: readonly string[]) =>
  owned.some((mine) => domain === mine || domain.endsWith(`.${mine}`));

/** Applies one event; returns the domain whose earlier reports must be read, for a DomainAdded. */
export function apply(state: State, event: FeedEvent): string | null {
  switch (event.type) {
    case "AggregateReportReceived": {
      const report = event.data as unknown as AggregateReport;
      const days: Record<string, number> = {};
      for (const row of report.rows) {
        for (const [day, count] of spreadOverDays(report.begin, report.end, row.count)) {
          days[day] = (days[day] ?? 0) + count;
        }
      }
      state.reports[event.id] = { domain: report.policy.domain.toLowerCase(), days };
      return null;
    }
    case "DomainAdded": {
      const domain = String(event.data.domain);
      const coveredBefore = isUnder(domain, state.owned);
      if (!state.owned.includes(domain)) state.owned.push(domain);
      // A domain under one already owned brought nothing new.
      return coveredBefore ? null : domain;
    }
    case "DomainRemoved": {
      state.owned = state.owned.filter((domain) => domain !== event.data.domain);
      for (const [id, report] of Object.entries(state.reports)) {
        if (!isUnder(report.domain, state.owned)) delete state.reports[id];
      }
      return null;
    }
    case "AggregateFactsExpired": {
      for (const domain of event.data.domains as string[])
        state.expiredBefore[domain] = String(event.data.before);
      return null;
    }
    default:
      return null;
  }
}

/** Messages per day of the reports under `domain` (one of the tenant's), days with none left out. */
export function dailyCounts(state: State, domain: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const report of Object.values(state.reports)) {
    if (!isUnder(report.domain, [domain])) continue;
    const expired = state.expiredBefore[report.domain];
    for (const [day, count] of Object.entries(report.days)) {
      if (expired && day < expired) continue;
      counts[day] = (counts[day] ?? 0) + count;
    }
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}
