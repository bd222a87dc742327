import type { IngestedItem } from "@dmarc-ledger/intake";

/** What an import found, counted per report (and per rejected input), for the closing summary. */
export class ImportTally {
  inputs = 0;
  stored = 0;
  duplicates = 0;
  rejected: { name: string; code: string; reason: string }[] = [];

  add(name: string, items: readonly IngestedItem[]): void {
    this.inputs++;
    for (const item of items) {
      if (item.kind === "rejected") this.rejected.push({ name, code: item.code, reason: item.reason });
      else if (item.status === "duplicate") this.duplicates++;
      else this.stored++;
    }
  }

  /** The numbers, then the rejected inputs by reason and the first few of them by name. */
  summary(listLimit = 10): string[] {
    const lines = [
      `${this.inputs} inputs read: ${this.stored} reports stored, ${this.duplicates} duplicates, ${this.rejected.length} inputs rejected (kept with the reason).`,
    ];
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
}

export function describeItem(name: string, item: IngestedItem): string {
  switch (item.kind) {
    case "aggregate":
      return `${name}: aggregate report for ${item.domain}, ${item.rows} rows, ${item.messages} messages (${item.status})`;
    case "failure":
      return `${name}: failure report for ${item.domain} (${item.status})`;
    case "rejected":
      return `${name}: rejected (${item.code}): ${item.reason}; ${item.status === "kept" ? "kept" : "already kept"} as rejected-input-${item.sha256.slice(0, 12)}…`;
  }
}
