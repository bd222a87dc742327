import { type Kysely, sql } from "kysely";

/**
 * json keeps the text as written: reading it back is a copy, where jsonb is re-serialised on
 * every read (4× the database's time for a catch-up over report events, which are all read
 * whole). The store never queries inside the documents, which is what jsonb is for.
 */
export const documentsAsJsonText = {
  async up(db: Kysely<unknown>) {
    await sql`alter table events alter column data type json using data::json,
      alter column metadata type json using metadata::json`.execute(db);
  },
};
