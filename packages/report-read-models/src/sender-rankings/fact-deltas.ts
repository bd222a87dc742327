import { type AnySchema, type ArrayElement, type ArrayElementType, arrayParam } from "@dmarc-ledger/db";
import { type Kysely, sql, type Transaction } from "kysely";
import type { CounterSums } from "../counters.js";
import type { ReportSchema } from "../schema.js";

const DAY = 86_400;
/** Rows per statement: bounds the statement's size (one array per column). */
const rowsPerStatement = 20_000;

/** A fact's key in agg_sender_fact, and what a batch added to it. */
export interface SenderFactDelta {
  domain: string;
  t: number;
  sourceIp: string;
  disposition: string;
  dmarcPass: boolean;
  forwarded: boolean;
  sums: CounterSums;
}

/**
 * Appends what batch `seq` of aggregate_by_sender added to agg_sender_fact to agg_sender_delta
 * (per UTC day): what a query adds to a sender ranking built before the batch.
 */
export async function appendSenderFactDeltas(
  trx: Transaction<ReportSchema>,
  seq: string,
  deltas: readonly SenderFactDelta[],
): Promise<void> {
  for (let start = 0; start < deltas.length; start += rowsPerStatement) {
    const slice = deltas.slice(start, start + rowsPerStatement);
    const column = (read: (delta: SenderFactDelta) => ArrayElement, type: ArrayElementType) =>
      arrayParam(slice.map(read), type);
    await sql`insert into agg_sender_delta (seq, domain, day, source_ip, disposition, dmarc_pass, forwarded,
        volume, unaligned_arc_pass, dkim_aligned, spf_aligned, dkim_pass, spf_pass)
      select ${seq}::bigint, * from unnest(${column((d) => d.domain, "text")},
        ${column((d) => Math.floor(d.t / DAY), "integer")}, ${column((d) => d.sourceIp, "text")},
        ${column((d) => d.disposition, "text")}, ${column((d) => d.dmarcPass, "boolean")},
        ${column((d) => d.forwarded, "boolean")}, ${column((d) => d.sums.volume, "bigint")},
        ${column((d) => d.sums.unalignedArcPass, "bigint")}, ${column((d) => d.sums.dkimAligned, "bigint")},
        ${column((d) => d.sums.spfAligned, "bigint")}, ${column((d) => d.sums.dkimPass, "bigint")},
        ${column((d) => d.sums.spfPass, "bigint")})`.execute(trx);
  }
}

/**
 * Appends the facts an expiry removes, negated, as batch `seq`: a ranking built before the
 * expiry loses them at query time as it gains a batch's facts. Deletes them from agg_sender_fact
 * in the same statement.
 */
export async function appendExpiredSenderFacts(
  trx: Transaction<ReportSchema>,
  seq: string,
  domains: readonly string[],
  cutoff: number,
): Promise<void> {
  await sql`with gone as (
      delete from agg_sender_fact where domain = any(${domains}::text[]) and t < ${cutoff} returning *
    )
    insert into agg_sender_delta (seq, domain, day, source_ip, disposition, dmarc_pass, forwarded,
      volume, unaligned_arc_pass, dkim_aligned, spf_aligned, dkim_pass, spf_pass)
    select ${seq}::bigint, domain, (t / ${DAY})::integer, source_ip, disposition, dmarc_pass, forwarded,
      -volume, -unaligned_arc_pass, -dkim_aligned, -spf_aligned, -dkim_pass, -spf_pass
    from gone`.execute(trx);
}

/**
 * Deletes the deltas that no sender ranking needs: a ranking needs those of its report domains
 * on its bucket's days numbered after its build (a ranking built later needs none of the
 * earlier ones; one whose domains change is built again). Returns how many rows went. Run by the
 * upkeep, which builds the rankings, one round at a time; an answer reading a ranking with the
 * deltas after it still sees them in its snapshot.
 */
export async function pruneSenderFactDeltas(db: Kysely<AnySchema>): Promise<number> {
  const result = await sql`with needed as materialized (
      select split_part(pair, ' ', 1) as domain, (b.bucket_start / ${DAY})::integer as first_day,
        (b.bucket_end / ${DAY})::integer as last_day, b.built_seq
      from sender_ranking_build b cross join unnest(b.report_domains) as pair
    )
    delete from agg_sender_delta x where not exists (select 1 from needed n
      where n.domain = x.domain and x.day between n.first_day and n.last_day and x.seq > n.built_seq)`.execute(
    db,
  );
  return Number(result.numAffectedRows ?? 0);
}
