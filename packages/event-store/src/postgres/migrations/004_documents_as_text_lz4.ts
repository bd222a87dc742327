import { type Kysely, sql } from "kysely";

/**
 * The documents as text, compressed with lz4 where the server has it (PostgreSQL 14 or later
 * built with lz4, as Debian's is; PGlite has none and keeps pglz). The store writes them with
 * JSON.stringify and parses them as it reads them; it never queries inside them, so json's check
 * of every document on insert was work for nothing. A report's event (about 5.7 KB of JSON for
 * 20 rows) is compressed on its append and decompressed on every read. Inserting 10,000 such
 * documents (psql, issue 27): 840 to 990 ms as json with pglz, 460 to 550 ms as json with lz4,
 * 170 to 180 ms as text with lz4; reading them back 200 to 215 ms with pglz, 130 ms with lz4;
 * stored in 10 MB against 8 MB with pglz. The type change rewrites the table once (20,000
 * events in 0.56 s); the values it rewrites, and those written before, keep pglz.
 */
export const documentsAsTextLz4 = {
  async up(db: Kysely<unknown>) {
    await sql`alter table events alter column data type text, alter column metadata type text`.execute(db);
    if (!(await serverHasLz4(db))) return;
    await sql`alter table events alter column data set compression lz4,
      alter column metadata set compression lz4`.execute(db);
  },
};

async function serverHasLz4(db: Kysely<unknown>): Promise<boolean> {
  const { rows } = await sql<{ lz4: boolean }>`
    select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'`.execute(
    db,
  );
  return rows[0]?.lz4 === true;
}
