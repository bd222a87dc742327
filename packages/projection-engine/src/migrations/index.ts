import type { MigrationSet } from "@dmarc-ledger/db";
import { projectionCheckpoint } from "./001_projection_checkpoint.js";

/**
 * The engine's checkpoints. Until the read models were split (issue 22) the read-model set
 * (`read_models`) made this table, in its 001_skeleton; a database it migrated carries that over.
 */
export const projectionEngineMigrations: MigrationSet = {
  name: "projection_engine",
  migrations: {
    "001_projection_checkpoint": projectionCheckpoint,
  },
  formerly: { set: "read_models", migrations: { "001_projection_checkpoint": "001_skeleton" } },
};
