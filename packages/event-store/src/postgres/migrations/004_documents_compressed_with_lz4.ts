import { type Kysely, sql } from "kysely";

/**
 * The documents compressed with lz4 where the server has it (PostgreSQL 14 or later built with
 * lz4, as Debian's is). A report's event (about 5.7 KB of JSON for 20 rows) is compressed on its
 * append and decompressed on every read: for 10,000 such events, inserts took 760 to 850 ms with
 * pglz and 320 to 400 ms with lz4, reading them back 200 to 215 ms against 130 ms (psql, issue 27),
 * for a quarter more bytes (10 MB against 8 MB). Values written before keep pglz and read back
 * the same. PGlite has no lz4: nothing changes there.
 */
export const documentsCompressedWithLz4 = {
  async up(db: Kysely<unknown>) {
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
