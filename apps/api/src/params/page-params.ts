import { badParameter } from "../api-error.js";

/** page and per_page alone, for listings that have no period, plus the names the caller allows. */
export function parsePageParams(
  query: Record<string, unknown>,
  extra: readonly string[] = [],
): { page: number; perPage: number } {
  for (const name of Object.keys(query)) {
    if (name !== "page" && name !== "per_page" && !extra.includes(name)) {
      throw badParameter(name, "is not a parameter of this endpoint.");
    }
  }
  const read = (name: string, max: number, fallback: number) => {
    const raw = query[name];
    if (raw === undefined) return fallback;
    if (typeof raw !== "string") throw badParameter(name, "give it once.");
    if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
      const shown = raw.length > 40 ? `${raw.slice(0, 40)}…` : raw;
      throw badParameter(name, `must be a whole number from 1 to ${max}, not "${shown}".`);
    }
    return Number(raw);
  };
  return { page: read("page", Number.MAX_SAFE_INTEGER, 1), perPage: read("per_page", 1000, 100) };
}

/** A required query parameter given once. */
export function requiredQuery(query: Record<string, unknown>, name: string): string {
  const value = query[name];
  if (value === undefined || value === "") throw badParameter(name, "is required.");
  if (typeof value !== "string") throw badParameter(name, "give it once.");
  return value;
}
