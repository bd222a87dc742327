import type { MigrationSet } from "@dmarc-ledger/db";
import { dataKeyMigration } from "./001_data_key.js";
import { personalDataPolicyMigration } from "./002_personal_data_policy.js";
import { retentionLeaseMigration } from "./003_retention_lease.js";
import { shredEpochMigration } from "./004_shred_epoch.js";

/** The tables the personal-data package owns (the data keys, the tenants' policies), on their own bookkeeping table. */
export const personalDataMigrations: MigrationSet = {
  name: "personal_data",
  migrations: {
    "001_data_key": dataKeyMigration,
    "002_personal_data_policy": personalDataPolicyMigration,
    "003_retention_lease": retentionLeaseMigration,
    "004_shred_epoch": shredEpochMigration,
  },
};
