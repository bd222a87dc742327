import type { MigrationSet } from "@dmarc-ledger/db";
import { imapProgress } from "./001_imap_progress.js";

/** The IMAP intake's own table, on its own bookkeeping table. */
export const imapProgressMigrations: MigrationSet = {
  name: "imap_intake",
  migrations: {
    "001_imap_progress": imapProgress,
  },
};
