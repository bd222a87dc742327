import { type Kysely, sql } from "kysely";

/**
 * The feed's index of the global order: which tenant each event is for, the report events by
 * report domain (a domain added later reads its earlier reports through it), and the owners of
 * domains as the projection has seen them so far (so that a report goes to whoever owned its
 * domain when it arrived, and a replay gives the same answer).
 *
 * Positions are the store's global positions: PostgreSQL's pack two 64-bit values, hence
 * numeric(39), never int8 (packages/event-store/src/postgres/global-order.ts).
 */
export const eventFeedMigration = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await sql`create table feed_entry (
      tenant_id text not null,
      position numeric(39, 0) not null,
      primary key (tenant_id, position))`.execute(db);
    // Labels reversed (com.example.mail), compared in byte order: a domain and its subdomains
    // are one range of the index.
    await sql`create table feed_report (
      reversed_domain text collate "C" not null,
      position numeric(39, 0) not null,
      primary key (reversed_domain, position))`.execute(db);
    await sql`create table feed_domain_owner (
      domain text primary key,
      tenant_id text not null)`.execute(db);
  },
};
