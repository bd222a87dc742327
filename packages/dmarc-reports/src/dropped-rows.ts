import type { DroppedRowReason, DroppedRows } from "./types.js";

/** The rows dropped in all, whatever the reason. */
export function droppedRowCount(dropped: readonly DroppedRows[]): number {
  let rows = 0;
  for (const entry of dropped) rows += entry.rows;
  return rows;
}

/** `invalid_count 1 (row 2: count "-5" is not a whole number), invalid_source_ip 3 (row 4: …)` */
export function describeDropped(dropped: readonly DroppedRows[]): string {
  return dropped.map((entry) => `${entry.reason} ${entry.rows} (${entry.first})`).join(", ");
}

/** Counts dropped rows by reason, keeping the first of each, in the order the reasons first came. */
export class DroppedRowTally {
  private readonly byReason = new Map<DroppedRowReason, DroppedRows>();

  add(reason: DroppedRowReason, row: string): void {
    const entry = this.byReason.get(reason);
    if (entry) entry.rows++;
    else this.byReason.set(reason, { reason, rows: 1, first: row });
  }

  get total(): number {
    return droppedRowCount([...this.byReason.values()]);
  }

  list(): DroppedRows[] {
    return [...this.byReason.values()].map((entry) => ({ ...entry }));
  }
}
