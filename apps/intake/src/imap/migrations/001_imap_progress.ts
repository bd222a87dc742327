import { type Kysely, sql } from "kysely";

/** How far the IMAP intake got in each folder it reads (see progress.ts). */
export const imapProgress = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema exists
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("imap_progress")
      // "user@host:port/folder": one row per folder the intake reads.
      .addColumn("mailbox", "text", (column) => column.primaryKey())
      // UIDVALIDITY is an unsigned 32-bit number; kept as text like every other bigint we read.
      .addColumn("uid_validity", "text", (column) => column.notNull())
      .addColumn("last_uid", "bigint", (column) => column.notNull())
      .addColumn("updated_at", "timestamptz", (column) => column.notNull().defaultTo(sql`now()`))
      .execute();
  },
};
