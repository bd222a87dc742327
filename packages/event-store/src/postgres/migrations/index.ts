import type { MigrationSet } from "@dmarc-ledger/db";
import { type Kysely, sql } from "kysely";

/**
 * The event store's own tables, migrated with `migrateToLatest(db, eventStoreMigrations)`.
 *
 * One statement per `execute`: PGlite runs parameterised (extended protocol) queries, which take
 * a single statement each.
 */
export const eventStoreMigrations: MigrationSet = {
  name: "event_store",
  migrations: {
    "001_events_and_streams": {
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
    },
    // Appends are serialised now (global-order.ts): a stream's last writer no longer needs checking.
    "002_streams_without_writer": {
      async up(db: Kysely<unknown>) {
        await sql`alter table streams drop column transaction_id`.execute(db);
      },
    },
    // json keeps the text as written: reading it back is a copy, where jsonb is re-serialised on
    // every read (4× the database's time for a catch-up over report events, which are all read
    // whole). The store never queries inside the documents, which is what jsonb is for.
    "003_documents_as_json_text": {
      async up(db: Kysely<unknown>) {
        await sql`alter table events alter column data type json using data::json,
          alter column metadata type json using metadata::json`.execute(db);
      },
    },
  },
};
