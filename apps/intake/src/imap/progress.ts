import { type Database, migrateToLatest } from "@dmarc-ledger/db";
import type { Kysely } from "kysely";
import { imapProgressMigrations } from "./migrations/index.js";

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
