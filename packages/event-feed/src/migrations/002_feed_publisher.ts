import { type Kysely, sql } from "kysely";

/**
 * The broker's publisher follows the feed's index across tenants, in the global order: an index
 * on the position alone, and its checkpoint (the last position published).
 */
export const feedPublisherMigration = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await sql`create index feed_entry_position on feed_entry (position)`.execute(db);
    await sql`create table feed_publisher_checkpoint (
      name text primary key,
      position numeric(39, 0) not null)`.execute(db);
  },
};
