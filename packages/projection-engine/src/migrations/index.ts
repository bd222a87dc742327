import type { MigrationSet } from "@dmarc-ledger/db";
import { projectionCheckpoint } from "./001_projection_checkpoint.js";
import { projectionLease } from "./002_projection_lease.js";

/**
 * The engine's checkpoints, and the leases through which processes share projections and jobs.
 * Until the read models were split (issue 22) the read-model set (`read_models`) made the
 * checkpoints' table, in its 001_skeleton; a database it migrated carries that over.
 */
export const projectionEngineMigrations: MigrationSet = {
  name: "projection_engine",
  migrations: {
    "001_projection_checkpoint": projectionCheckpoint,
    "002_projection_lease": projectionLease,
  },
  formerly: { set: "read_models", migrations: { "001_projection_checkpoint": "001_skeleton" } },
};
