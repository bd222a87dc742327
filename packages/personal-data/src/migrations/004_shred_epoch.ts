import { type Kysely, sql } from "kysely";

/**
 * A counter moved by every deletion of data keys: what an answer that opened sealed fields
 * (GET forensic, kept in the API's answer cache) is keyed by, so that a shred is seen at once.
 */
export const shredEpochMigration = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await sql`create sequence data_key_shred_epoch`.execute(db);
  },
};
