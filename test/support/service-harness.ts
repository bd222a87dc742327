import { type CliIO, type RunningService, runCli, runCliHere, startService } from "@dmarc-ledger/cli";
import { createPgliteDataDir, createTestDatabase } from "@dmarc-ledger/db/testing";
import { stopWithin } from "@dmarc-ledger/process";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { type Logger, pino } from "pino";
import { testMasterKey } from "./master-key.js";

/** One embedded (PGlite directory) or PostgreSQL (fresh database) environment for a test file. */
export interface Backend {
  name: string;
  env: NodeJS.ProcessEnv;
  cleanup(): Promise<void>;
}

/** A data directory holding a fresh PGlite database (a copy of the run's initdb), not yet migrated. */
export async function pgliteBackend(): Promise<Backend> {
  const { dataDir, remove } = await createPgliteDataDir("dl-e2e-");
  return { name: "PGlite", env: { DMARC_LEDGER_DATA_DIR: dataDir }, cleanup: async () => remove() };
}

export async function postgresBackend(): Promise<Backend> {
  const database = await createTestDatabase("dl_e2e");
  return {
    name: "PostgreSQL",
    env: { DATABASE_URL: database.url, MASTER_KEY: testMasterKey },
    cleanup: database.drop,
  };
}

export const backends: [string, () => Promise<Backend>][] = [
  ["PGlite", pgliteBackend],
  ["PostgreSQL", postgresBackend],
];

/** Runs a CLI command in this process and returns what it printed. */
export async function cli(
  env: NodeJS.ProcessEnv,
  ...argv: string[]
): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { out: (text) => out.push(text), err: (text) => err.push(text) };
  const code = await runCli(argv, io, env);
  return { code, out: out.join("\n"), err: err.join("\n") };
}

export interface ServiceHandle {
  runtime: Runtime;
  service: RunningService;
  get(path: string, key: string): Promise<{ status: number; body: string; json: unknown; headers: Headers }>;
  put(path: string, key: string, form: Record<string, string>): Promise<{ status: number; json: unknown }>;
  stop(): Promise<void>;
}

/** What the harness gives the in-process service to stop: 60 s, half a hook's 120 s. */
const stopTimeoutMs = 60_000;

export async function startTestService(
  given: NodeJS.ProcessEnv,
  logger: Logger = pino({ level: "silent" }),
): Promise<ServiceHandle> {
  // Files run side by side: a channel a test turns on (REPORTS_DOMAIN: SMTP and the DNS server's
  // reports zone) listens on a free port, not on its fixed default, unless the test names one.
  const env = { SMTP_PORT: "0", DNS_PORT: "0", ...given };
  const runtime = await openRuntime(env);
  const service = await startService({
    runtime,
    env,
    port: 0,
    logger,
    bootstrapTenant: false,
    // As `dmarc-ledger start` does: in embedded mode, CLI commands run in the service.
    controlCommands: (argv, io) => runCliHere(argv, io, env),
  });
  const url = (path: string) => new URL(path, service.apiRoot).toString();
  return {
    runtime,
    service,
    async get(path, key) {
      const response = await fetchIdempotent(url(path), { headers: { Authorization: `Bearer ${key}` } });
      const body = await response.text();
      return { status: response.status, body, json: JSON.parse(body), headers: response.headers };
    },
    async put(path, key, form) {
      const response = await fetch(url(path), {
        method: "PUT",
        headers: { Authorization: `Bearer ${key}` },
        body: new URLSearchParams(form),
      });
      return { status: response.status, json: await response.json() };
    },
    async stop() {
      // Within a deadline well inside the hooks' (vitest.config.ts), so that a stop that hangs
      // fails by naming the part it waits for instead of timing the hook out in silence.
      await stopWithin(logger, (progress) => service.stop(progress), { timeoutMs: stopTimeoutMs });
      await runtime.close();
    },
  };
}

/**
 * fetch for a GET, tried once more when a reused keep-alive connection is reset before any
 * answer (RFC 9112, 9.3.1 lets a client retry an idempotent request then). The service runs in
 * this process: on a loaded machine a PGlite query can hold the event loop past the server's
 * keep-alive timeout, which then closes the connection the client has just reused.
 */
async function fetchIdempotent(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    if (code !== "ECONNRESET" && code !== "UND_ERR_SOCKET") throw error;
    return await fetch(url, init);
  }
}
