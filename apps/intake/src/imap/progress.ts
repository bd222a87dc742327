import { type Database, type MigrationSet, migrateToLatest } from "@dmarc-ledger/db";
import { type Kysely, sql } from "kysely";

/**
 * How far the intake got in one folder: the folder's UIDVALIDITY and the highest UID whose message
 * was delivered and moved away. A new UIDVALIDITY (the server renumbered the folder) starts over
 * from UID 1; the intake's deduplication makes that harmless.
 */
export interface FolderProgress {
  uidValidity: bigint;
  lastUid: number;
}

export interface ImapProgressStore {
  load(mailbox: string): Promise<FolderProgress | null>;
  save(mailbox: string, progress: FolderProgress): Promise<void>;
}

interface ProgressSchema {
  imap_progress: {
    mailbox: string;
    uid_validity: string;
    last_uid: string | number;
    updated_at: Date;
  };
}

export const imapProgressMigrations: MigrationSet = {
  name: "imap_intake",
  migrations: {
    "001_imap_progress": {
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
    },
  },
};

/** The progress table in our database (PostgreSQL or PGlite); creates it when missing. */
export async function openImapProgressStore(database: Database): Promise<ImapProgressStore> {
  await migrateToLatest(database.db as Kysely<unknown>, imapProgressMigrations);
  const db = database.withSchema<ProgressSchema>();
  return {
    async load(mailbox) {
      const row = await db
        .selectFrom("imap_progress")
        .select(["uid_validity", "last_uid"])
        .where("mailbox", "=", mailbox)
        .executeTakeFirst();
      return row ? { uidValidity: BigInt(row.uid_validity), lastUid: Number(row.last_uid) } : null;
    },
    async save(mailbox, progress) {
      const values = {
        mailbox,
        uid_validity: progress.uidValidity.toString(),
        last_uid: progress.lastUid,
        updated_at: new Date(),
      };
      await db
        .insertInto("imap_progress")
        .values(values)
        .onConflict((conflict) =>
          conflict.column("mailbox").doUpdateSet({
            uid_validity: values.uid_validity,
            last_uid: values.last_uid,
            updated_at: values.updated_at,
          }),
        )
        .execute();
    },
  };
}
