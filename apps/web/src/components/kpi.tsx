import { formatPoints } from "../lib/format.js";

/** One headline figure, with its change against the period before when known. */
export function Kpi({
  label,
  value,
  change,
  changeLabel,
  better = "up",
}: {
  label: string;
  value: string;
  /** Percentage points (shares) or percent (counts) against the period before. */
  change?: number | null;
  changeLabel?: (change: number) => string;
  better?: "up" | "down";
}) {
  const known = change !== undefined && change !== null;
  const direction = !known || change === 0 ? "flat" : change > 0 === (better === "up") ? "good" : "bad";
  return (
    <div class="kpi">
      <div class="kpi-label">{label}</div>
      <div class="kpi-value">{value}</div>
      {known ? (
        <div class={`kpi-change kpi-${direction}`}>
          <span aria-hidden="true">{change > 0 ? "▲" : change < 0 ? "▼" : "●"}</span>{" "}
          {changeLabel ? changeLabel(change) : formatPoints(change)}{" "}
          <span class="muted">vs previous period</span>
        </div>
      ) : (
        <div class="kpi-change kpi-flat muted">no earlier data to compare</div>
      )}
    </div>
  );
}
