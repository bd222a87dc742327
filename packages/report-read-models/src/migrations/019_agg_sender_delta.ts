import { type Kysely, sql } from "kysely";

/**
 * What each batch of aggregate_by_sender added to agg_sender_fact, and what an expiry took away
 * (negated), numbered by the batch's change number (agg_sender_change_counter): agg_sender_fact
 * sums into its rows, so what came after a sender ranking's build cannot be told apart there. A
 * query adds the rows numbered after the ranking's build to the (domain, sender)s they touch
 * (queries/src/sender-ranking-patch.ts) instead of grouping the whole period; the upkeep deletes
 * the rows every ranking has counted. Keyed by UTC day, not report begin: a ranking's bucket is
 * whole days.
 */
export const aggSenderDelta = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await sql`create table agg_sender_delta (
      seq bigint not null, domain text not null, day integer not null, source_ip text not null,
      disposition text not null, dmarc_pass boolean not null, forwarded boolean not null,
      volume bigint not null, unaligned_arc_pass bigint not null, dkim_aligned bigint not null,
      spf_aligned bigint not null, dkim_pass bigint not null, spf_pass bigint not null)`.execute(db);
    // A query reads its tenant's report domains' rows after its ranking's build, a probe each.
    await sql`create index agg_sender_delta_by_domain on agg_sender_delta (domain, seq)`.execute(db);
    // The upkeep deletes the oldest numbers.
    await sql`create index agg_sender_delta_by_seq on agg_sender_delta (seq)`.execute(db);
  },
};
