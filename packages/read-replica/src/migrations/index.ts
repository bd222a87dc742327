import type { MigrationSet } from "@dmarc-ledger/db";
import { writeMark } from "./001_write_mark.js";

/** Where each caller's last write stands in the primary's WAL: what its reads wait for. */
export const readReplicaMigrations: MigrationSet = {
  name: "read_replica",
  migrations: {
    "001_write_mark": writeMark,
  },
};
