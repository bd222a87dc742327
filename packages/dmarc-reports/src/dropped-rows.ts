import type { DroppedRowReason, DroppedRows } from "./types.js";

/** `invalid_count 1 (row 2: invalid count "-5"), invalid_source_ip 3 (row 4: …)` */
export function describeDropped(dropped: readonly DroppedRows[]): string {
  return dropped.map((entry) => `${entry.reason} ${entry.rows} (${entry.first})`).join(", ");
}

/** Counts dropped rows by reason, keeping the first of each, in the order the reasons first came. */
export class DroppedRowTally {
  private readonly byReason = new Map<DroppedRowReason, DroppedRows>();
  private rows = 0;

  add(reason: DroppedRowReason, row: string): void {
    this.rows++;
    const entry = this.byReason.get(reason);
    if (entry) entry.rows++;
    else this.byReason.set(reason, { reason, rows: 1, first: row });
  }

  get total(): number {
    return this.rows;
  }

  list(): DroppedRows[] {
    return [...this.byReason.values()].map((entry) => ({ ...entry }));
  }
}
