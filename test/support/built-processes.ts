import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

// Tests that start our processes run them as production does: plain node on the build output
// (docs/operations.md, "Build"). Through tsx each process cost about 3 s more of CPU, compiling
// the sources as it loads them; the suite starts some 15 of them.

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Names a directory of the test run (vitest's global setup makes it: global-setup.ts) where the
 * run's build writes its outcome: `status` (its exit code) and `output`.
 */
export const buildRunVariable = "DMARC_LEDGER_TEST_BUILD";

/**
 * Names a directory of the test run where the run's build of the dashboard (apps/web) writes its
 * outcome, as buildRunVariable's does: the browser tests wait for it (builtWeb).
 */
export const webBuildRunVariable = "DMARC_LEDGER_TEST_WEB_BUILD";

/**
 * Starts `node scripts/build.mjs --no-check --no-web` for the run, writing into `run`; the tests
 * that start built processes wait for it (builtEntry). Without the type check: `pnpm test` runs
 * it beside the tests, and the JavaScript is the same. The dashboard is built apart (`script`
 * scripts/build-web.mjs), so that these tests do not wait for it. Returns a function that stops
 * the build if it still runs.
 */
export function startRunBuild(
  run: string,
  script: readonly string[] = ["scripts/build.mjs", "--no-check", "--no-web"],
): () => void {
  mkdirSync(run, { recursive: true });
  const output: Buffer[] = [];
  // In a process group of its own, so that stopping it stops its tsc too.
  const build: ChildProcess = spawn(process.execPath, [...script], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stopped = false;
  const finish = (code: string, text: Buffer | string) => {
    if (stopped) return;
    // The output first: `status` is what the waiting tests look for.
    writeFileSync(join(run, "output"), text);
    writeFileSync(join(run, "status"), code);
  };
  build.stdout!.on("data", (chunk: Buffer) => output.push(chunk));
  build.stderr!.on("data", (chunk: Buffer) => output.push(chunk));
  build.once("close", (code) => finish(String(code ?? -1), Buffer.concat(output)));
  build.once("error", (error) => finish("-1", String(error)));
  // A run that ends before the build (no test needed it) does not wait for it: the next build
  // starts from scratch, whatever this one left in .build/ or dist/.
  return () => {
    stopped = true;
    if (build.exitCode !== null || build.signalCode !== null || build.pid === undefined) return;
    try {
      process.kill(-build.pid, "SIGKILL");
    } catch {
      // Ended meanwhile.
    }
  };
}

/** The dashboard's build for the run: only when its sources changed since the last build. */
export const webBuildScript = ["scripts/build-web.mjs", "--if-stale"] as const;

/** A build of the run, finished; outside vitest's global setup, a build of this process's own. */
function waitForBuild(variable: string, script: readonly string[] | undefined, what: string): Promise<void> {
  return (async () => {
    let run = process.env[variable];
    if (!run) {
      run = mkdtempSync(join(tmpdir(), "dl-build-"));
      startRunBuild(run, script);
    }
    const status = join(run, "status");
    while (!existsSync(status)) await sleep(100);
    const code = readFileSync(status, "utf8");
    if (code !== "0")
      throw new Error(`${what} failed (${code}):\n${readFileSync(join(run, "output"), "utf8")}`);
  })();
}

let built: Promise<void> | undefined;
let webBuilt: Promise<void> | undefined;

const runBuild = () => {
  built ??= waitForBuild(buildRunVariable, undefined, "the build for the tests");
  return built;
};

/** The dashboard (apps/web/dist) built for this run, once its build is done. */
export function builtWeb(): Promise<void> {
  webBuilt ??= waitForBuild(webBuildRunVariable, webBuildScript, "the dashboard's build for the tests");
  return webBuilt;
}

/**
 * The node arguments that run `entry` (such as "apps/cli/dist/main.js", from the repository's
 * root) as production does, once this run's build is done.
 */
export async function builtEntry(entry: string): Promise<string[]> {
  await runBuild();
  return ["--conditions=dmarc-ledger-dist", join(repoRoot, entry)];
}
