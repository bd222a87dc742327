import type { IngestedItem } from "@dmarc-ledger/intake";

type DroppedRows = Extract<IngestedItem, { kind: "aggregate" }>["dropped"];

/** `invalid_count 1 (row 2: invalid count "-5"), …`: the rows a report left out, by reason. */
export function describeDropped(dropped: DroppedRows): string {
  return dropped.map(({ reason, rows, first }) => `${reason} ${rows} (${first})`).join(", ");
}

function droppedRows(dropped: DroppedRows): number {
  return dropped.reduce((sum, entry) => sum + entry.rows, 0);
}

/** What an import found, counted per report (and per rejected input), for the closing summary. */
export class ImportTally {
  inputs = 0;
  stored = 0;
  duplicates = 0;
  rejected: { name: string; code: string; reason: string }[] = [];
  /** Reports that left rows out (stored without them), with the rows by reason. */
  dropped: { name: string; dropped: DroppedRows }[] = [];

  add(name: string, items: readonly IngestedItem[]): void {
    this.inputs++;
    for (const item of items) {
      if (item.kind === "rejected") this.rejected.push({ name, code: item.code, reason: item.reason });
      else if (item.status === "duplicate") this.duplicates++;
      else this.stored++;
      if (item.kind === "aggregate" && item.dropped.length > 0)
        this.dropped.push({ name, dropped: item.dropped });
    }
  }

  /** The numbers, then the rejected inputs by reason and the first few of them by name; the same for dropped rows. */
  summary(listLimit = 10): string[] {
    const lines = [
      `${this.inputs} inputs read: ${this.stored} reports stored, ${this.duplicates} duplicates, ${this.rejected.length} inputs rejected (kept with the reason).`,
    ];
    lines.push(...this.droppedSummary(listLimit));
    if (this.rejected.length === 0) return lines;
    const byCode = new Map<string, number>();
    for (const { code } of this.rejected) byCode.set(code, (byCode.get(code) ?? 0) + 1);
    lines.push(`Rejected: ${[...byCode].map(([code, count]) => `${code} ${count}`).join(", ")}.`);
    for (const { name, code, reason } of this.rejected.slice(0, listLimit)) {
      lines.push(`  ${name}: ${code}: ${reason}`);
    }
    if (this.rejected.length > listLimit) lines.push(`  … and ${this.rejected.length - listLimit} more`);
    lines.push("`dmarc-ledger reprocess` runs rejected inputs again (after a fix).");
    return lines;
  }

  private droppedSummary(listLimit: number): string[] {
    if (this.dropped.length === 0) return [];
    const byReason = new Map<string, number>();
    for (const { dropped } of this.dropped) {
      for (const { reason, rows } of dropped) byReason.set(reason, (byReason.get(reason) ?? 0) + rows);
    }
    const rows = [...byReason.values()].reduce((sum, count) => sum + count, 0);
    const lines = [
      `Rows dropped: ${rows} in ${this.dropped.length} reports (stored without them): ${[...byReason].map(([reason, count]) => `${reason} ${count}`).join(", ")}.`,
    ];
    for (const { name, dropped } of this.dropped.slice(0, listLimit)) {
      lines.push(`  ${name}: ${describeDropped(dropped)}`);
    }
    if (this.dropped.length > listLimit) lines.push(`  … and ${this.dropped.length - listLimit} more`);
    return lines;
  }
}

export function describeItem(name: string, item: IngestedItem): string {
  switch (item.kind) {
    case "aggregate": {
      const dropped =
        item.dropped.length > 0
          ? `; ${droppedRows(item.dropped)} rows dropped: ${describeDropped(item.dropped)}`
          : "";
      return `${name}: aggregate report for ${item.domain}, ${item.rows} rows, ${item.messages} messages (${item.status})${dropped}`;
    }
    case "failure":
      return `${name}: failure report for ${item.domain} (${item.status})`;
    case "tls":
      return `${name}: TLS report for ${item.domains.join(", ") || "no domain"}, ${item.sessions} sessions, ${item.failedSessions} failed (${item.status})`;
    case "rejected":
      return `${name}: rejected (${item.code}): ${item.reason}; ${item.status === "kept" ? "kept" : "already kept"} as rejected-input-${item.sha256.slice(0, 12)}…`;
  }
}
