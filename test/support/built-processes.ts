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
 * Starts `node scripts/build.mjs --no-check` for the run, writing into `run`; the tests that start
 * built processes wait for it (builtEntry). Without the type check: `pnpm test` runs it beside the
 * tests, and the JavaScript is the same. Returns a function that stops the build if it still runs.
 */
export function startRunBuild(run: string): () => void {
  mkdirSync(run, { recursive: true });
  const output: Buffer[] = [];
  // In a process group of its own, so that stopping it stops its tsc too.
  const build: ChildProcess = spawn(process.execPath, ["scripts/build.mjs", "--no-check"], {
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

let built: Promise<void> | undefined;

/** This run's build, finished; outside vitest's global setup, a build of this process's own. */
function runBuild(): Promise<void> {
  built ??= (async () => {
    let run = process.env[buildRunVariable];
    if (!run) {
      run = mkdtempSync(join(tmpdir(), "dl-build-"));
      startRunBuild(run);
    }
    const status = join(run, "status");
    while (!existsSync(status)) await sleep(100);
    const code = readFileSync(status, "utf8");
    if (code !== "0")
      throw new Error(
        `the build for the tests failed (${code}):\n${readFileSync(join(run, "output"), "utf8")}`,
      );
  })();
  return built;
}

/**
 * The node arguments that run `entry` (such as "apps/cli/dist/main.js", from the repository's
 * root) as production does, once this run's build is done.
 */
export async function builtEntry(entry: string): Promise<string[]> {
  await runBuild();
  return ["--conditions=dmarc-ledger-dist", join(repoRoot, entry)];
}
