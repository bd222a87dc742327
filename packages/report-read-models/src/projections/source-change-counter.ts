import type { AnySchema } from "@dmarc-ledger/db";
import { type Kysely, sql, type Transaction } from "kysely";
import type { ReportSchema } from "../schema.js";

/**
 * The number of the latest aggregate_by_source batch, kept in agg_source_change's single row.
 *
 * Each batch takes the next number in its own transaction and stamps it on the facts it writes
 * (agg_source.changed_seq). The row's lock is held until the batch commits, so numbers are
 * committed in order: whatever a snapshot reads here is the highest number of any fact it can
 * see, and every batch it cannot see has a higher one. A ranking built in that snapshot trusts
 * exactly the facts numbered up to it. (A sequence cannot say this: a batch that took a number
 * may not have committed yet.)
 */
export async function takeSourceChangeNumber(trx: Transaction<ReportSchema>): Promise<string> {
  const { rows } = await sql<{ seq: string }>`update agg_source_change set last_seq = last_seq + 1
    returning last_seq::text as seq`.execute(trx);
  if (rows[0]) return rows[0].seq;
  // A rebuild beside the live tables (or a reset) starts the table empty; its batches are one at
  // a time under the projection's checkpoint lock, so one of them inserts the row.
  const { rows: inserted } = await sql<{ seq: string }>`insert into agg_source_change (single, last_seq)
    values (true, 1) returning last_seq::text as seq`.execute(trx);
  return inserted[0]!.seq;
}

/** The latest batch number visible to this snapshot (0 before the first batch). */
export async function lastSourceChangeNumber(db: Kysely<AnySchema>): Promise<string> {
  const { rows } = await sql<{ seq: string }>`select coalesce(
      (select last_seq from agg_source_change), 0)::text as seq`.execute(db);
  return rows[0]!.seq;
}
