import { type Kysely, sql } from "kysely";

/**
 * The events and the streams' heads.
 *
 * One statement per `execute`: PGlite runs parameterised (extended protocol) queries, which take
 * a single statement each.
 */
export const eventsAndStreams = {
  async up(db: Kysely<unknown>) {
    await sql`
      create table events (
        -- Sequence value: orders events only within one transaction (see global-order.ts).
        position bigint generated always as identity primary key,
        -- The writing transaction; the global order is (transaction_id, position).
        transaction_id xid8 not null default pg_current_xact_id(),
        stream text not null,
        revision bigint not null,
        type text not null,
        data jsonb not null,
        metadata jsonb not null,
        id uuid not null unique,
        recorded_at timestamptz not null default now(),
        unique (stream, revision)
      )`.execute(db);
    await sql`create unique index events_global_order on events (transaction_id, position)`.execute(db);
    await sql`
      create table streams (
        stream text primary key,
        -- Revision of the stream's last event.
        revision bigint not null,
        -- The transaction that wrote it: a later writer must have a larger one (see append.ts).
        transaction_id xid8 not null
      )`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await sql`drop table streams`.execute(db);
    await sql`drop table events`.execute(db);
  },
};
