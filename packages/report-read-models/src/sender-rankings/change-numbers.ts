import type { AnySchema } from "@dmarc-ledger/db";
import { type Kysely, sql, type Transaction } from "kysely";
import type { ReportSchema } from "../schema.js";

const DAY = 86_400;

/**
 * Takes the next batch number of a one-row counter. The row stays locked until the batch commits,
 * so numbers commit in order: a snapshot that reads the counter sees every batch numbered up to
 * it and none above (as agg_source_change does for the source rankings). An empty table (a
 * rebuild beside the live tables starts it so) gets its row from the first batch.
 */
async function takeNumber(
  trx: Transaction<ReportSchema>,
  table: "agg_sender_change_counter" | "source_ip_name_change",
): Promise<string> {
  const { rows } = await sql<{ seq: string }>`update ${sql.table(table)} set last_seq = last_seq + 1
    returning last_seq::text as seq`.execute(trx);
  if (rows[0]) return rows[0].seq;
  const inserted =
    table === "source_ip_name_change"
      ? await sql<{ seq: string }>`insert into source_ip_name_change (single, epoch, last_seq)
          values (true, gen_random_uuid()::text, 1) returning last_seq::text as seq`.execute(trx)
      : await sql<{ seq: string }>`insert into agg_sender_change_counter (single, last_seq)
          values (true, 1) returning last_seq::text as seq`.execute(trx);
  return inserted.rows[0]!.seq;
}

/**
 * Records that a batch of aggregate_by_sender wrote facts (one per element of `changed`) of these
 * report domains on the days of these `t`s: a sender ranking whose bucket holds one of those
 * days, built before, no longer counts them (a query adds them from agg_sender_delta; the upkeep
 * builds it again). Returns the batch's number, or null when nothing changed.
 */
export async function recordSenderFactChanges(
  trx: Transaction<ReportSchema>,
  changed: Iterable<{ domain: string; t: number }>,
): Promise<string | null> {
  const days = new Map<string, { domain: string; day: number; facts: number }>();
  for (const { domain, t } of changed) {
    const day = Math.floor(t / DAY);
    const key = `${domain}\u0000${day}`;
    const entry = days.get(key) ?? { domain, day, facts: 0 };
    entry.facts++;
    days.set(key, entry);
  }
  if (days.size === 0) return null;
  const seq = await takeNumber(trx, "agg_sender_change_counter");
  const list = [...days.values()];
  await sql`insert into agg_sender_change (domain, day, seq, facts)
    select d, n, ${seq}::bigint, k from unnest(${list.map((x) => x.domain)}::text[], ${list.map((x) => x.day)}::integer[],
      ${list.map((x) => x.facts)}::bigint[]) as u(d, n, k)
    on conflict (domain, day) do update set seq = excluded.seq, facts = agg_sender_change.facts + excluded.facts`.execute(
    trx,
  );
  return seq;
}

/** The number a batch of source_ip_names stamps on the addresses whose naming it changes. */
export const takeNamingNumber = (trx: Transaction<ReportSchema>) => takeNumber(trx, "source_ip_name_change");

/** What a sender ranking's build saw: the latest fact batch, and the naming's epoch and batch. */
export interface SenderChangeMarks {
  factSeq: string;
  nameEpoch: string;
  nameSeq: string;
}

/** The marks visible to this snapshot (zeros and an empty epoch before any batch). */
export async function senderChangeMarks(db: Kysely<AnySchema>): Promise<SenderChangeMarks> {
  const { rows } = await sql<{ fact_seq: string; name_epoch: string; name_seq: string }>`select
      coalesce((select last_seq from agg_sender_change_counter), 0)::text as fact_seq,
      coalesce((select epoch from source_ip_name_change), '') as name_epoch,
      coalesce((select last_seq from source_ip_name_change), 0)::text as name_seq`.execute(db);
  return { factSeq: rows[0]!.fact_seq, nameEpoch: rows[0]!.name_epoch, nameSeq: rows[0]!.name_seq };
}
