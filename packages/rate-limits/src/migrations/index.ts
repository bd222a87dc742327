import type { MigrationSet } from "@dmarc-ledger/db";
import { rateLimit } from "./001_rate_limit.js";

/** The API's request counts per key and window, shared by every API process of a deployment. */
export const rateLimitMigrations: MigrationSet = {
  name: "rate_limits",
  migrations: {
    "001_rate_limit": rateLimit,
  },
};
