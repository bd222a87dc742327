import type { MigrationSet } from "@dmarc-ledger/db";
import { rawInputMigration } from "./001_raw_input.js";
import { rowsDroppedMigration } from "./002_rows_dropped.js";
import { inputOwnersMigration } from "./003_input_owners.js";

/** The tables the intake owns (the raw archive), migrated on their own bookkeeping table. */
export const intakeMigrations: MigrationSet = {
  name: "intake",
  migrations: {
    "001_raw_input": rawInputMigration,
    "002_rows_dropped": rowsDroppedMigration,
    "003_input_owners": inputOwnersMigration,
  },
};
