import type { MigrationSet } from "@dmarc-ledger/db";
import { userReadModelMigration } from "./001_user_read_model.js";
import { credentialsMigration } from "./002_credentials.js";
import { sessionsMigration } from "./003_sessions.js";
import { signInThrottleMigration } from "./004_sign_in_throttle.js";
import { sealedAddressesMigration } from "./005_sealed_addresses.js";
import { signInDelaysMigration } from "./006_sign_in_delays.js";

/** The tables the users package owns, migrated on their own bookkeeping table. */
export const usersMigrations: MigrationSet = {
  name: "users",
  migrations: {
    "001_user_read_model": userReadModelMigration,
    "002_credentials": credentialsMigration,
    "003_sessions": sessionsMigration,
    "004_sign_in_throttle": signInThrottleMigration,
    "005_sealed_addresses": sealedAddressesMigration,
    "006_sign_in_delays": signInDelaysMigration,
  },
};
