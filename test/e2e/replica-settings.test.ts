import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBuiltProcess } from "../support/start-built-process.js";

/** The API's replica settings are checked at start: a wrong one stops it, named, before it serves. */
describe("the API's DATABASE_REPLICA_URL at start", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase("dl_replica_settings");
  });
  afterAll(async () => database?.drop());

  const start = async (env: NodeJS.ProcessEnv) => {
    const api = await startBuiltProcess("apps/api/dist/main.js", { PORT: "0", ...env });
    const code = await api.exited;
    return { code, fatal: api.lines.find((line) => line.level === 60)?.msg ?? api.stderr() };
  };

  it("names a wrong replica URL, a wrong wait and a replica without a primary, at once", async () => {
    const { code, fatal } = await start({
      DATABASE_REPLICA_URL: "mysql://replica/x",
      REPLICA_WAIT_MS: "soon",
    });
    expect(code).toBe(1);
    expect(fatal).toContain("DATABASE_REPLICA_URL");
    expect(fatal).toContain("REPLICA_WAIT_MS");
    expect(fatal).toContain("set DATABASE_URL (the primary) too");
  });

  it("refuses a replica URL that points at a server taking writes", async () => {
    const { code, fatal } = await start({ DATABASE_URL: database.url, DATABASE_REPLICA_URL: database.url });
    expect(code).toBe(1);
    expect(fatal).toContain("is not a streaming replica");
  });
});
