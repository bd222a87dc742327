const integer = new Intl.NumberFormat("en", { maximumFractionDigits: 0 });
const compact = new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 });

/** The API's counters are decimal strings (they may pass 2^53 in theory; not in a view). */
export const count = (value: string | number | null | undefined) => Number(value ?? 0);

export const formatCount = (value: string | number | null | undefined) => integer.format(count(value));
export const formatCompact = (value: string | number | null | undefined) => compact.format(count(value));

/** A share in percent with one decimal, as the tables show it and their CSV carries it; null for 0 of 0. */
export function share(
  part: string | number | null | undefined,
  whole: string | number | null | undefined,
): number | null {
  const total = count(whole);
  if (total === 0) return null;
  return Math.round((count(part) / total) * 1000) / 10;
}

export const formatShare = (value: number | null) => (value === null ? "–" : `${value.toFixed(1)}%`);

/** A change in percentage points: "+2.5 pts", "−1.0 pts", "±0.0 pts". */
export function formatPoints(value: number | null): string {
  if (value === null) return "–";
  const sign = value > 0 ? "+" : value < 0 ? "−" : "±";
  return `${sign}${Math.abs(value).toFixed(1)} pts`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** An ISO time or "YYYY-MM-DD HH:MM:SS" (UTC), shown as "2026-11-24 08:01 UTC". */
export function formatTime(value: string | null | undefined): string {
  if (!value) return "–";
  const iso = value.includes("T") ? value : `${value.replace(" ", "T")}Z`;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return value;
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}
