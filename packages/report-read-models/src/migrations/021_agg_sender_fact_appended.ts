import { type Kysely, sql } from "kysely";

/**
 * agg_sender_fact becomes a log of what each projection batch added, as agg_source is (012): a
 * batch appends one row per key it summed instead of adding into the row an earlier batch wrote.
 * Every reader already sums the facts (a sender groups many addresses, a ranking a bucket's days),
 * so a key written by several batches reads the same. The upsert's unique index and its
 * `on conflict` path were the largest single cost of an import's catch-up (issue 27; docs/intake.md
 * has the figures); the readers find a period's facts of their domains by (domain, t), as they
 * did by the key's first two columns. On an existing deployment the index is built once, writes
 * to the table waiting meanwhile: about 5 s for 6.6 million facts (10 million report rows).
 */
export const aggSenderFactAppended = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await sql`create index agg_sender_fact_by_domain_t on agg_sender_fact (domain, t)`.execute(db);
    await sql`alter table agg_sender_fact drop constraint agg_sender_fact_pk`.execute(db);
  },
};
