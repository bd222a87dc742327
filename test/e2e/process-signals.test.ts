import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { createPgliteDataDir } from "@dmarc-ledger/db/testing";
import { processIsRunning } from "@dmarc-ledger/process/process-running";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtEntry, builtWeb } from "../support/built-processes.js";
import { aggregateCorpus } from "../support/corpus.js";

// The production processes as a supervisor runs them: plain node on the build output, no tsx and
// no pnpm in between (the run's build: built-processes.ts).
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
/** The CLI as production runs it: the bundle `pnpm build` makes (scripts/bundle-cli.mjs). */
const cliBundle = "apps/cli/bundle/dmarc-ledger.mjs";

interface Started {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  /** Resolves with the first match of `pattern` in stdout + stderr. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

function start(command: string, args: string[], env: NodeJS.ProcessEnv): Started {
  const child = spawn(command, args, { cwd: repoRoot, env: { ...process.env, ...env } });
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk) => {
    out += chunk;
  });
  child.stderr!.on("data", (chunk) => {
    err += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    async waitFor(pattern, timeoutMs = 240_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = (out + err).match(pattern);
        if (match) return match;
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`no ${pattern} in output:\n${out}\n${err}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
  };
}

/** Resolves with the exit code, or with "still running" after `ms`. */
const exitWithin = (started: Started, ms: number) =>
  Promise.race([
    started.exited,
    new Promise<string>((resolve) => setTimeout(() => resolve("still running"), ms)),
  ]);

async function retry<T>(attempt: () => Promise<T>, timeoutMs = 240_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** A zombie counts as gone: once re-parented, the service is collected by whoever adopted it. */
function alive(pid: number): boolean {
  return processIsRunning(pid);
}

// A fresh embedded data directory takes a while to set up on a busy 2-core machine.
describe("the service's processes", { timeout: 300_000 }, () => {
  const dirs: string[] = [];
  /** Not there yet: the process makes the directory and the database, as on a first start. */
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "dl-signals-"));
    dirs.push(dir);
    return join(dir, "data");
  };
  /** A fresh database made already (a copy of the run's initdb): for tests about signals. */
  const initialisedDataDir = async () => {
    const { dataDir } = await createPgliteDataDir("dl-signals-");
    dirs.push(dataDir);
    return dataDir;
  };
  const running: Started[] = [];
  let cliMain: string[];
  let apiMain: string[];

  beforeAll(async () => {
    cliMain = await builtEntry("apps/cli/dist/main.js");
    apiMain = await builtEntry("apps/api/dist/main.js");
    // `pnpm start` builds the dashboard when its build is stale: not while the run's build writes it.
    await builtWeb();
  }, 300_000);
  afterAll(() => {
    for (const started of running) if (started.child.exitCode === null) started.child.kill("SIGKILL");
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("finishes a request in flight on SIGTERM, then exits 0 within 10 s", async () => {
    const service = start(process.execPath, [cliBundle, "start"], {
      PORT: "0",
      DMARC_LEDGER_DATA_DIR: await initialisedDataDir(),
      DNS_NAMESERVERS: "127.0.0.1:9",
    });
    running.push(service);
    const [, apiRoot] = await service.waitFor(/listening on (http:\/\/\S+\/api\/)/);
    const [, key] = await service.waitFor(/shown once:\n {2}(dlk_\S+)/);
    // The default tenant's first admin chooses a password through the link printed beside the key.
    const [, link] = await service.waitFor(/admin@localhost, sets a password here.*:\n {2}(http:\/\/\S+)/);
    expect(new URL(link!).origin).toBe(new URL(apiRoot!).origin);
    const set = await fetch(`${apiRoot}set_password`, {
      method: "PUT",
      body: new URLSearchParams({
        token: new URL(link!).hash.slice("#token=".length),
        password: "the first admin's password",
      }),
    });
    expect(set.status).toBe(200);
    const url = new URL(`${apiRoot}add-domain`);

    // A PUT whose body is half sent when the signal comes: it is in flight, and must be answered.
    const body = "domain=example.com";
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        url,
        {
          method: "PUT",
          headers: {
            Authorization: `Bearer ${key}`,
            "Content-Type": "application/x-www-form-urlencoded",
            "Content-Length": Buffer.byteLength(body),
          },
        },
        (res) => {
          let text = "";
          res.on("data", (chunk) => {
            text += chunk;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on("error", reject);
      req.write(body.slice(0, 7));
      setTimeout(() => {
        service.child.kill("SIGTERM");
        setTimeout(() => req.end(body.slice(7)), 500);
      }, 300);
    });
    const signalledAt = Date.now();
    expect(await answer).toEqual({ status: 200, body: JSON.stringify({ status: "SUCCESS", added: true }) });
    expect(await exitWithin(service, 10_000 - (Date.now() - signalledAt))).toBe(0);
    // Stopped accepting: nobody answers on the port any more.
    await expect(fetch(`${apiRoot}`)).rejects.toThrow();
    // stdout carries JSON lines only; the human banner (with the key) went to stderr.
    for (const line of service.stdout().split("\n").filter(Boolean))
      expect(() => JSON.parse(line)).not.toThrow();
    expect(service.stdout()).not.toContain(key);
    expect(service.stdout()).toContain('"msg":"stopped"');
  });

  it("exits 1 at once, with the reason, when its port is taken", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const service = start(process.execPath, [cliBundle, "start"], {
        PORT: String(port),
        DMARC_LEDGER_DATA_DIR: dataDir(),
      });
      running.push(service);
      expect(await exitWithin(service, 30_000)).toBe(1);
      expect(service.stderr()).toContain(`cannot listen on port ${port}`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("names every wrong variable of the standalone API at once, and exits 1", async () => {
    const api = start(process.execPath, [...apiMain], {
      PORT: "http",
      DNS_TIMEOUT_MS: "soon",
      DMARC_LEDGER_DATA_DIR: dataDir(),
    });
    running.push(api);
    expect(await exitWithin(api, 10_000)).toBe(1);
    expect(api.stderr()).toContain('PORT: "http" is not an integer from 0 to 65535');
    expect(api.stderr()).toContain("DNS_TIMEOUT_MS: ");
    expect(api.stdout()).toBe("");
  });

  it("runs the standalone API at LOG_LEVEL=warn without an info line, and stops on SIGTERM", async () => {
    // A fixed port of this project's test range: at warn no line says which port 0 became.
    const port = 28010;
    const api = start(process.execPath, [...apiMain], {
      PORT: String(port),
      PUBLIC_BASE_URL: "http://localhost:1/api/",
      DMARC_LEDGER_DATA_DIR: await initialisedDataDir(),
      LOG_LEVEL: "warn",
    });
    running.push(api);
    // "starting" while the database opens, then "ok" once the app serves.
    const health = await retry(async () => {
      const answer = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { status: string };
      if (answer.status !== "ok") throw new Error(`healthz says ${answer.status}`);
      return answer;
    });
    expect(health).toEqual({ status: "ok" });
    api.child.kill("SIGTERM");
    expect(await exitWithin(api, 10_000)).toBe(0);
    expect(api.stdout()).toBe("");
  });

  it("runs the commands from the CLI bundle as from the per-package build", async () => {
    const env = { DMARC_LEDGER_DATA_DIR: await initialisedDataDir() };
    const run = (...args: string[]) => {
      const result = spawnSync(process.execPath, args, {
        cwd: repoRoot,
        env: { ...process.env, ...env },
        encoding: "utf8",
      });
      expect(result.status, result.stderr).toBe(0);
      return result.stdout;
    };
    const created = JSON.parse(run(cliBundle, "tenant", "create", "acme", "--json")) as { tenantId: string };
    const listed = run(cliBundle, "tenant", "list", "--json");
    expect(JSON.parse(listed)).toEqual([
      expect.objectContaining({ tenantId: created.tenantId, name: "acme", activeKeys: 1 }),
    ]);
    expect(run(...cliMain, "tenant", "list", "--json")).toBe(listed);
    // import parses on worker threads, started from a file beside the bundle's own.
    const report = `${aggregateCorpus}addisonfoods.com!example.com!1536105600!1536191999.xml`;
    expect(run(cliBundle, "import", report)).toContain("1 reports stored");
    // The bundle's PGlite shut down cleanly and let the data directory go.
    expect(existsSync(join(env.DMARC_LEDGER_DATA_DIR, "postmaster.pid"))).toBe(false);
    expect(existsSync(join(env.DMARC_LEDGER_DATA_DIR, "dmarc-ledger.lock"))).toBe(false);
    expect(run(cliBundle, "--version").trim()).toBe(run(...cliMain, "--version").trim());
  });

  it("has the intake's parse worker beside the bundle, where the parse pool starts it", async () => {
    // A worker that does not start is not an error (the pool's caller parses on its own thread
    // instead), so the import above would pass without it: the worker file is run here itself.
    const bytes = readFileSync(`${aggregateCorpus}addisonfoods.com!example.com!1536105600!1536191999.xml`);
    const worker = new Worker(join(repoRoot, "apps/cli/bundle/parse-worker.mjs"));
    try {
      const next = () =>
        new Promise((resolve, reject) => {
          worker.once("message", resolve);
          worker.once("error", reject);
        });
      // A worker says when it has loaded the parser; only then does the pool send it inputs.
      expect(await next()).toEqual({ ready: true });
      worker.postMessage({ bytes, keepLimit: 1 << 20, parseOptions: undefined, maxHeldBytes: 1 << 20 });
      const prepared = await next();
      expect(prepared).toMatchObject({
        sha256: createHash("sha256").update(bytes).digest("hex"),
        parsed: { kind: "held" },
      });
    } finally {
      await worker.terminate();
    }
  });

  it("does not outlive `pnpm start` when the supervisor stops pnpm with SIGTERM", async () => {
    const pnpm = start("pnpm", ["start"], { PORT: "0", DMARC_LEDGER_DATA_DIR: dataDir() });
    running.push(pnpm);
    const [, pid] = await pnpm.waitFor(/"pid":(\d+).*"msg":"listening"/);
    const servicePid = Number(pid);
    expect(servicePid).not.toBe(pnpm.child.pid);
    pnpm.child.kill("SIGTERM");
    const deadline = Date.now() + 10_000;
    while (alive(servicePid) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(servicePid)).toBe(false);
  });
});
