import { type Kysely, sql, type Transaction } from "kysely";
import { addToSums, type CounterSums, emptySums, type RowVerdict } from "../counters.js";
import type { ReadModelSchema } from "../schema.js";

type SummedTable = "agg_domain" | "agg_organization" | "agg_source";
type Key = Record<string, string | number | boolean>;

const counterColumns = {
  volume: (sums: CounterSums) => sums.volume,
  dmarc_pass: (sums: CounterSums) => sums.dmarcPass,
  unaligned_arc_pass: (sums: CounterSums) => sums.unalignedArcPass,
  dkim_aligned: (sums: CounterSums) => sums.dkimAligned,
  spf_aligned: (sums: CounterSums) => sums.spfAligned,
  dkim_pass: (sums: CounterSums) => sums.dkimPass,
  spf_pass: (sums: CounterSums) => sums.spfPass,
};

/**
 * Sums a batch's rows per key in memory, then adds them to the table with one upsert per few
 * thousand keys: a batch of many reports costs a statement per distinct key set, not per row.
 */
export class SumsByKey {
  private readonly entries = new Map<string, { key: Key; sums: CounterSums }>();

  constructor(
    private readonly table: SummedTable,
    private readonly keyColumns: readonly string[],
    /** agg_source keeps DMARC pass as a key column instead of a counter. */
    private readonly withDmarcPass = true,
  ) {}

  add(key: Key, verdict: RowVerdict, count: number): void {
    const id = this.keyColumns.map((column) => String(key[column])).join("\u0000");
    let entry = this.entries.get(id);
    if (!entry) {
      entry = { key, sums: emptySums() };
      this.entries.set(id, entry);
    }
    addToSums(entry.sums, verdict, count);
  }

  async write(trx: Transaction<ReadModelSchema>): Promise<void> {
    const columns = Object.entries(counterColumns).filter(
      ([name]) => this.withDmarcPass || name !== "dmarc_pass",
    );
    const rows = [...this.entries.values()].map(({ key, sums }) => {
      const row: Record<string, unknown> = { ...key };
      for (const [name, read] of columns) row[name] = read(sums);
      return row;
    });
    // PostgreSQL allows 65,535 parameters a statement.
    const perStatement = Math.floor(60_000 / (this.keyColumns.length + columns.length));
    // The table is chosen at run time among three of the same shape; kysely cannot type that.
    // biome-ignore lint/suspicious/noExplicitAny: see above
    const db = trx as unknown as Kysely<any>;
    for (let i = 0; i < rows.length; i += perStatement) {
      await db
        .insertInto(this.table)
        .values(rows.slice(i, i + perStatement))
        .onConflict((oc) =>
          oc
            .columns([...this.keyColumns])
            .doUpdateSet(
              Object.fromEntries(
                columns.map(([name]) => [
                  name,
                  sql`${sql.ref(`${this.table}.${name}`)} + ${sql.ref(`excluded.${name}`)}`,
                ]),
              ),
            ),
        )
        .execute();
    }
  }
}
