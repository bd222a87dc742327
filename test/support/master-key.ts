import { randomBytes } from "node:crypto";

/**
 * The MASTER_KEY of the test run's PostgreSQL environments (the embedded ones make their own in
 * the data directory, as `pnpm start` does): required with DATABASE_URL (docs/privacy.md).
 */
export const testMasterKey = randomBytes(32).toString("base64");
