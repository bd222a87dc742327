import { arrayParam } from "@dmarc-ledger/db";
import { sql, type Transaction } from "kysely";
import { addToSums, type CounterSums, emptySums, type RowVerdict } from "../counters.js";
import type { ReportSchema } from "../schema.js";

type SummedTable = "agg_domain" | "agg_organization" | "agg_source" | "agg_sender_fact";
type KeyValue = string | number | boolean;

/** A key column and its SQL type, for the arrays the upsert unnests. */
export interface KeyColumn {
  name: string;
  type: "text" | "bigint" | "boolean";
}

const counterColumns: [string, (sums: CounterSums) => number][] = [
  ["volume", (sums) => sums.volume],
  ["dmarc_pass", (sums) => sums.dmarcPass],
  ["unaligned_arc_pass", (sums) => sums.unalignedArcPass],
  ["dkim_aligned", (sums) => sums.dkimAligned],
  ["spf_aligned", (sums) => sums.spfAligned],
  ["dkim_pass", (sums) => sums.dkimPass],
  ["spf_pass", (sums) => sums.spfPass],
];

/** Keys per statement: bounds the statement's size, not its parameter count (one array per column). */
const keysPerStatement = 20_000;

/**
 * Sums a batch's rows per key in memory, then adds them to the table: one statement per few
 * thousand keys, each column sent as one array and unnested, so the statement has a dozen
 * parameters however many keys it carries.
 */
export class SumsByKey {
  private readonly entriesByKey = new Map<string, { key: KeyValue[]; sums: CounterSums }>();

  constructor(
    private readonly table: SummedTable,
    private readonly keyColumns: readonly KeyColumn[],
    /** agg_source keeps DMARC pass as a key column instead of a counter. */
    private readonly withDmarcPass = true,
    /**
     * Rows written once, beside those of earlier batches, instead of added into them: agg_source,
     * whose rows say what each batch added (the rankings add what came after their build), and
     * agg_sender_fact, whose readers all sum (its upsert was the import's costliest statement).
     */
    private readonly appendOnly = false,
  ) {}

  /** The keys summed so far. */
  *keys(): IterableIterator<readonly KeyValue[]> {
    for (const entry of this.entriesByKey.values()) yield entry.key;
  }

  /** The keys summed so far with their sums. */
  *entries(): IterableIterator<{ readonly key: readonly KeyValue[]; readonly sums: CounterSums }> {
    yield* this.entriesByKey.values();
  }

  add(key: KeyValue[], verdict: RowVerdict, count: number): void {
    const id = key.join("\u0000");
    let entry = this.entriesByKey.get(id);
    if (!entry) {
      entry = { key, sums: emptySums() };
      this.entriesByKey.set(id, entry);
    }
    addToSums(entry.sums, verdict, count);
  }

  get size(): number {
    return this.entriesByKey.size;
  }

  /**
   * `stamp`, when given, is a column set to one value on every row written or changed (agg_source
   * records which batch changed a fact last).
   */
  async write(trx: Transaction<ReportSchema>, stamp?: { column: string; value: string }): Promise<void> {
    const counters = counterColumns.filter(([name]) => this.withDmarcPass || name !== "dmarc_pass");
    const entries = [...this.entriesByKey.values()];
    const table = sql.table(this.table);
    const columns = [
      ...this.keyColumns.map((column) => column.name),
      ...counters.map(([name]) => name),
      ...(stamp ? [stamp.column] : []),
    ];
    const conflict = sql.join(this.keyColumns.map((column) => sql.ref(column.name)));
    const updates = sql.join([
      ...counters.map(
        ([name]) => sql`${sql.ref(name)} = ${sql.ref(`${this.table}.${name}`)} + excluded.${sql.ref(name)}`,
      ),
      ...(stamp ? [sql`${sql.ref(stamp.column)} = excluded.${sql.ref(stamp.column)}`] : []),
    ]);
    for (let start = 0; start < entries.length; start += keysPerStatement) {
      const slice = entries.slice(start, start + keysPerStatement);
      const arrays = [
        ...this.keyColumns.map((column, index) =>
          arrayParam(
            slice.map((entry) => entry.key[index]!),
            column.type,
          ),
        ),
        ...counters.map(([, read]) =>
          arrayParam(
            slice.map((entry) => read(entry.sums)),
            "bigint",
          ),
        ),
      ];
      await sql`insert into ${table} (${sql.join(columns.map((column) => sql.ref(column)))})
        select *${stamp ? sql`, ${stamp.value}::bigint` : sql``} from unnest(${sql.join(arrays)})
        ${this.appendOnly ? sql`` : sql`on conflict (${conflict}) do update set ${updates}`}`.execute(trx);
    }
  }
}
