import type { Query } from "../api/client.js";
import { type Period, type PeriodChoice, parsePeriodChoice, resolvePeriod } from "./period.js";
import { useLocation } from "./router.js";

/** The filters every view shares, from the URL: the period and the domain. */
export interface Filters {
  choice: PeriodChoice;
  period: Period;
  /** One of the tenant's domains, or null for all. */
  domain: string | null;
  /** start, end and domain as the API takes them. */
  query: Query;
}

export function filtersFrom(params: URLSearchParams, now = new Date()): Filters {
  const choice = parsePeriodChoice(params);
  const period = resolvePeriod(choice, now);
  const domain = params.get("domain");
  return { choice, period, domain, query: { start: period.start, end: period.end, domain } };
}

export function useFilters(): Filters {
  return filtersFrom(useLocation().params);
}

/** The shared filters' part of the URL, which links between views carry along. */
export function sharedParams(params: URLSearchParams): string {
  const kept = new URLSearchParams();
  for (const name of ["period", "from", "to", "domain"]) {
    const value = params.get(name);
    if (value) kept.set(name, value);
  }
  const search = kept.toString();
  return search ? `?${search}` : "";
}

/** A link to another view that keeps the shared filters, with some parameters of its own. */
export function viewLink(path: string, extra: Record<string, string | null> = {}): string {
  const params = new URLSearchParams(sharedParams(new URLSearchParams(location.search)));
  for (const [name, value] of Object.entries(extra)) {
    if (value === null) params.delete(name);
    else params.set(name, value);
  }
  const search = params.toString();
  return `${path}${search ? `?${search}` : ""}`;
}
