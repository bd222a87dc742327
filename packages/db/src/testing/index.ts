import { randomBytes } from "node:crypto";
import pg from "pg";

/** The real PostgreSQL server the tests use (CI starts it when it is down). */
export const testServerUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty database on the test server, so that test files never see each other's rows. */
export async function createTestDatabase(prefix = "dl_test"): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(testServerUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function adminQuery(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: testServerUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export {
  createPgliteDataDir,
  openTestPglite,
  pgliteTemplateVariable,
  type TestDataDir,
} from "./pglite-data-dir.js";
