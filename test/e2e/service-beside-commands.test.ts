/**
 * Issue 40, points 1 and 2: the embedded service (`dmarc-ledger start`, the bundle production
 * runs, in a process of its own) beside the commands handed to it over its control socket. A
 * client that hangs up mid-answer costs it nothing; an import of 2,000 files handed to it does
 * not hold its event loop (it answers /healthz meanwhile), and a SIGTERM during that import stops
 * it cleanly within its STOP_TIMEOUT_MS.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createPgliteDataDir } from "@dmarc-ledger/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtEntry } from "../support/built-processes.js";
import { aggregateCorpus } from "../support/corpus.js";
import { distinctCorpusCopies } from "../support/corpus-copies.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const cliBundle = "apps/cli/bundle/dmarc-ledger.mjs";

interface Running {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

function run(args: string[], env: NodeJS.ProcessEnv): Running {
  const child = spawn(process.execPath, [cliBundle, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk) => {
    out += chunk;
  });
  child.stderr!.on("data", (chunk) => {
    err += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exited };
}

/** Polls `find` until it returns something; fails at once if `service` exits meanwhile. */
async function until<T>(
  find: () => T | undefined | null,
  what: string,
  service: Running,
  timeoutMs = 240_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (service.child.exitCode !== null || service.child.signalCode !== null)
      throw new Error(`the service exited while waiting for ${what}:\n${service.err().slice(-2000)}`);
    if (found !== undefined && found !== null) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The service's JSON log lines (stdout) with message `msg`. */
const logged = (service: Running, msg: string) =>
  service
    .out()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { msg: string; argv?: string[] })
    .filter((line) => line.msg === msg);

/**
 * Hands `argv` to the service over its control socket as the CLI does, and hangs up as soon as
 * the first answer line comes, as `dmarc-ledger import DIR | head -1` makes the CLI do.
 */
function handOverAndHangUp(socketPath: string, argv: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath, () => {
      socket.write(
        `${JSON.stringify({ argv, cwd: repoRoot, caller: { pid: process.pid, user: "test" } })}\n`,
      );
    });
    socket.once("data", () => {
      socket.destroy();
      resolve();
    });
    socket.once("error", reject);
  });
}

describe("the embedded service beside the commands handed to it", { timeout: 300_000 }, () => {
  let dataDir: string;
  let removeDataDir: () => unknown;
  let filesDir: string;
  let env: NodeJS.ProcessEnv;
  const started: Running[] = [];

  beforeAll(async () => {
    await builtEntry("apps/cli/dist/main.js");
    ({ dataDir, remove: removeDataDir } = await createPgliteDataDir("dl-beside-"));
    env = { DMARC_LEDGER_DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "info", STOP_TIMEOUT_MS: "10000" };
    filesDir = await mkdtemp(join(tmpdir(), "dl-beside-files-"));
    await distinctCorpusCopies(filesDir, 2_000);
  }, 300_000);

  afterAll(async () => {
    for (const process of started) if (process.child.exitCode === null) process.child.kill("SIGKILL");
    await removeDataDir?.();
    await rm(filesDir, { recursive: true, force: true });
  });

  async function startService(): Promise<{ service: Running; origin: string }> {
    const service = run(["start"], env);
    started.push(service);
    // Printed once every part runs, the control socket included.
    const [, apiRoot] = await until(
      () => /listening on (http:\/\/\S+\/api\/)/.exec(service.err()),
      "the service to listen",
      service,
    );
    return { service, origin: new URL(apiRoot!).origin };
  }

  it("goes on serving after clients that hang up in the middle of their answer", async () => {
    const { service, origin } = await startService();
    const socketPath = join(dataDir, "control.sock");
    for (let attempt = 1; attempt <= 3; attempt++) {
      await handOverAndHangUp(socketPath, ["import", aggregateCorpus]);
      // The import goes on to its end without its client; the service logs it.
      await until(
        () =>
          logged(service, "control command").length + logged(service, "control command failed").length >=
          attempt
            ? true
            : null,
        `the import handed over (attempt ${attempt}) to end`,
        service,
      );
    }
    expect(service.child.exitCode).toBeNull();
    expect((await fetch(`${origin}/healthz`)).status).toBe(200);
    const listed = run(["tenant", "list"], env);
    expect(await listed.exited).toBe(0);
    // The corpus's reports were stored by the first import: the service kept working for it.
    const imported = run(["import", aggregateCorpus], env);
    await imported.exited;
    expect(imported.out()).toMatch(/0 reports stored, \d+ duplicates/);

    service.child.kill("SIGTERM");
    expect(await service.exited).toBe(0);
  });

  it("answers /healthz during an import of 2,000 files, and stops within STOP_TIMEOUT_MS in the middle of it", async () => {
    const { service, origin } = await startService();
    const importing = run(["import", filesDir], env);
    started.push(importing);
    // Under way: some of its files stored.
    await until(
      () => (importing.out().split("\n").length > 50 ? true : null),
      "the import to be under way",
      service,
    );

    const health = await fetch(`${origin}/healthz`);
    expect(health.status).toBe(200);
    // Right after that answer, while the import stores its files (the summary below says it had
    // not read them all): the event loop was not held for the whole import.
    service.child.kill("SIGTERM");
    // 0: stopped by itself, within STOP_TIMEOUT_MS (past it, the service exits 1 naming the part
    // still stopping).
    expect(await service.exited, service.out()).toBe(0);
    expect(service.out()).toContain('"msg":"stopped"');
    // The import was ended early, and told why.
    expect(await importing.exited).toBe(1);
    const [, inputs] =
      /the import ended after ([\d,]+) inputs \(of 2,000 files\)/.exec(importing.err()) ?? [];
    expect(Number(inputs?.replaceAll(",", ""))).toBeLessThan(2_000);
  });
});
