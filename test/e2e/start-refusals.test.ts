import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cli, pgliteBackend, startTestService } from "../support/service-harness.js";
import { startBuiltProcess } from "../support/start-built-process.js";

/** `dmarc-ledger start` as a user runs it: the built command line in a process of its own. */
async function startProcess(env: NodeJS.ProcessEnv): Promise<{ code: number; err: string }> {
  const started = await startBuiltProcess("apps/cli/dist/main.js", env, ["start"]);
  const code = await started.exited;
  return { code, err: started.stderr() };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// `start` that cannot serve must say why and end with status 1 before it has created anything:
// on a first start, a tenant created before a failed listen would have its key lost for ever.
describe("start refuses to run, and creates nothing, when it cannot serve", () => {
  const dirs: string[] = [];
  const fresh = () => {
    const dir = mkdtempSync(join(tmpdir(), "dl-refusal-"));
    dirs.push(dir);
    return join(dir, "data");
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("names every wrong variable with what is allowed", { timeout: 20_000 }, async () => {
    const dataDir = fresh();
    const result = await cli(
      {
        DMARC_LEDGER_DATA_DIR: dataDir,
        PORT: "abc",
        DMARC_LEDGER_REGION: "EU",
        RATE_LIMIT_PER_SECOND: "lots",
        LOG_LEVEL: "loud",
        DNS_NAMESERVERS: "8.8.8.8:99999",
        DATABASE_URL: "mysql://localhost/x",
        // Settings of the parts start runs beside the API, named in the same message.
        SMTP_PORT: "many",
        SAFE_SPF_MIN_REFRESH: "soon",
        MASTER_KEY: "not-a-key-of-32-bytes",
      },
      "start",
    );
    expect(result.code).toBe(1);
    expect(result.err).toContain('PORT: "abc" is not an integer from 0 to 65535');
    expect(result.err).toContain('DMARC_LEDGER_REGION: "EU" is not one of global, eu');
    expect(result.err).toContain('RATE_LIMIT_PER_SECOND: "lots" is not an integer');
    expect(result.err).toContain('LOG_LEVEL: "loud" is not one of fatal, error, warn, info');
    expect(result.err).toContain("DNS_NAMESERVERS:");
    expect(result.err).toContain("DATABASE_URL: must start with postgres:// or postgresql://");
    expect(result.err).toContain("SMTP_PORT:");
    expect(result.err).toContain("SAFE_SPF_MIN_REFRESH:");
    expect(result.err).toContain("MASTER_KEY: is not 32 bytes as base64 or 64 hex digits");
    // A secret is never echoed, even a wrong one.
    expect(result.err).not.toContain("not-a-key-of-32-bytes");
    expect(existsSync(dataDir)).toBe(false);
  });

  it("refuses DATABASE_URL without MASTER_KEY, naming it, before it connects", {
    timeout: 20_000,
  }, async () => {
    const result = await startProcess({ DATABASE_URL: "postgres://127.0.0.1:1/nothing", MASTER_KEY: "" });
    expect(result.code).toBe(1);
    expect(result.err).toContain("MASTER_KEY: is required with DATABASE_URL");
    expect(result.err).not.toContain("cannot connect");
  });

  it("says that the port is taken, and leaves no data directory behind", { timeout: 20_000 }, async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    try {
      const port = (taken.address() as { port: number }).port;
      const dataDir = fresh();
      const result = await cli({ DMARC_LEDGER_DATA_DIR: dataDir, PORT: String(port) }, "start");
      expect(result.code).toBe(1);
      expect(result.err).toContain(`cannot listen on port ${port}: another process is using it`);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("names every wrong variable of every part at once as the command line runs it", {
    timeout: 30_000,
  }, async () => {
    // The command line checks the settings before it loads the service (main.ts): that check
    // named PORT and LOG_LEVEL, and stopped before the intake's SMTP_PORT.
    const dataDir = fresh();
    const result = await startProcess({
      DMARC_LEDGER_DATA_DIR: dataDir,
      PORT: "abc",
      LOG_LEVEL: "loud",
      SMTP_PORT: "x",
    });
    expect(result.code).toBe(1);
    expect(result.err).toContain('PORT: "abc" is not an integer from 0 to 65535');
    expect(result.err).toContain('LOG_LEVEL: "loud" is not one of');
    expect(result.err).toContain('SMTP_PORT: "x" is not an integer from 0 to 65535');
    expect(existsSync(dataDir)).toBe(false);
  });

  it("names DATABASE_URL when its server cannot be reached", { timeout: 30_000 }, async () => {
    const port = await closedPort();
    const url = `postgres://postgres:secret@127.0.0.1:${port}/nowhere`;
    const result = await startProcess({ DATABASE_URL: url, PORT: "0" });
    expect(result.code).toBe(1);
    expect(result.err).toContain(
      `cannot connect to the PostgreSQL server of DATABASE_URL (postgres://postgres:***@127.0.0.1:${port}/nowhere): connect ECONNREFUSED`,
    );
    expect(result.err).not.toContain("secret");
    // Any command, not only start.
    const listed = await cli({ DATABASE_URL: url }, "tenant", "list");
    expect(listed.code).toBe(1);
    expect(listed.err).toContain("cannot connect to the PostgreSQL server of DATABASE_URL");
  });

  it("says that the service already runs on the data directory, on its port or another", {
    timeout: 60_000,
  }, async () => {
    const backend = await pgliteBackend();
    const running = await startTestService(backend.env);
    try {
      const dataDir = backend.env.DMARC_LEDGER_DATA_DIR!;
      const port = new URL(running.service.apiRoot).port;
      const said = `dmarc-ledger is already running on the data directory ${dataDir} (it answers on its control socket)`;
      for (const env of [{ PORT: "0" }, { PORT: port }]) {
        const result = await startProcess({ ...backend.env, ...env });
        expect(result.code, result.err).toBe(1);
        expect(result.err).toContain(said);
        expect(result.err).not.toContain("did not answer");
      }
      // In this process too (no check before it: the running service answers the command).
      const inProcess = await cli(backend.env, "start");
      expect(inProcess.code).toBe(1);
      expect(inProcess.err).toContain(said);
      // It still serves.
      expect((await fetch(new URL("/healthz", running.service.apiRoot))).status).toBe(200);
    } finally {
      await running.stop();
      await backend.cleanup();
    }
  });
});
