/**
 * Issue 22, point 2: `pnpm start` on a fresh data directory (the first start: the embedded
 * database is made), as a new user runs it: with PGlite's template in the user's cache, as
 * `pnpm install` leaves it, and without (a first start then runs initdb). Measured: the time from the command to the first
 * `/readyz` 200, the service process's CPU time by then (its own and its reaped children's: the
 * initdb child), and its resident memory after BENCH_IDLE_SECONDS (default 5) idle. Goals: ready
 * within 5 s, at most 300 MB resident.
 *
 * Baselines measured in the same run, the machine being shared and its load changing: `node -e 0`
 * (the machine's speed), and the built start on PostgreSQL (the service without PGlite: the
 * issue's 128 MB). Also, for comparison, the built start embedded (production's), `pnpm start`
 * without pnpm, what `pnpm start` ran before (the sources through tsx) and, given
 * BENCH_COMPARE_CHECKOUT (an installed checkout, say of the commit before), `pnpm start` there.
 * BENCH_RUNS (default 3) runs each; medians.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { makePgliteTemplate } from "@dmarc-ledger/db";
import { createTestDatabase } from "@dmarc-ledger/db/testing";
import { testMasterKey } from "../support/master-key.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const runs = Number(process.env.BENCH_RUNS ?? 3);
const idleSeconds = Number(process.env.BENCH_IDLE_SECONDS ?? 5);
const ticksPerSecond = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout) || 100;

interface StartFigures {
  readyMs: number;
  cpuMs: number;
  idleRssMb: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The process's CPU time (user + system, with its children waited for), in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0);
  return (ticks * 1000) / ticksPerSecond;
}

function residentMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) / 1024;
}

/** Starts `command`, waits for /readyz 200, idles, measures, stops it. */
async function measureStart(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd = root,
): Promise<StartFigures> {
  const port = await freePort();
  const started = performance.now();
  const child: ChildProcess = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group: pnpm and the service stop together.
    detached: true,
  });
  let servicePid: number | null = null;
  let out = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    // The service says its pid on each log line; under pnpm it is not the spawned process.
    servicePid ??= Number(/"pid":(\d+)/.exec(out)?.[1] ?? Number.NaN) || null;
  });
  let err = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    err = (err + chunk).slice(-4096);
  });
  try {
    let readyMs: number | null = null;
    while (readyMs === null) {
      if (child.exitCode !== null)
        throw new Error(`${command} ${args.join(" ")} exited ${child.exitCode}: ${err}`);
      if (performance.now() - started > 120_000)
        throw new Error(`${command} ${args.join(" ")} not ready in 120 s`);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (response) => response.status === 200,
        () => false,
      );
      if (ready) readyMs = performance.now() - started;
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const pid = servicePid ?? child.pid!;
    const cpu = cpuMs(pid);
    await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
    return { readyMs, cpuMs: cpu, idleRssMb: residentMb(pid) };
  } finally {
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      // Gone already.
    }
    if (child.exitCode === null) await new Promise((resolve) => child.once("exit", resolve));
  }
}

async function series(
  label: string,
  run: () => Promise<StartFigures>,
  baseline?: { readyMs: number; idleRssMb: number },
): Promise<{ readyMs: number; idleRssMb: number }> {
  const figures: StartFigures[] = [];
  for (let index = 0; index < runs; index++) figures.push(await run());
  const readyMs = median(figures.map((f) => f.readyMs));
  const idleRssMb = median(figures.map((f) => f.idleRssMb));
  const cpu = median(figures.map((f) => f.cpuMs));
  const ratios = baseline
    ? `  ${(idleRssMb / baseline.idleRssMb).toFixed(2)}x RSS of the PostgreSQL start`
    : "";
  console.log(
    `${label.padEnd(48)} ready p50 ${(readyMs / 1000).toFixed(2).padStart(6)} s (${figures
      .map((f) => (f.readyMs / 1000).toFixed(1))
      .join(
        ", ",
      )})  cpu ${(cpu / 1000).toFixed(2)} s  idle RSS p50 ${idleRssMb.toFixed(0).padStart(4)} MB (${figures
      .map((f) => f.idleRssMb.toFixed(0))
      .join(", ")})${ratios}`,
  );
  return { readyMs, idleRssMb };
}

console.log("building (pnpm build)…");
const built = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: root, stdio: "inherit" });
if (built.status !== 0) process.exit(1);

const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
console.log(`load average at the start: ${load()}`);

const dirs: string[] = [];
/** A data directory to make; `withoutTemplate`: a user cache without PGlite's template either. */
const freshDataDir = (withoutTemplate = false) => {
  const dir = mkdtempSync(join(tmpdir(), "dl-bench-start-"));
  dirs.push(dir);
  return {
    DMARC_LEDGER_DATA_DIR: join(dir, "data"),
    LOG_LEVEL: "info",
    ...(withoutTemplate ? { XDG_CACHE_HOME: join(dir, "cache") } : {}),
  };
};
// As `pnpm install` leaves it (scripts/pglite-template.mjs).
console.log(`PGlite template: ${await makePgliteTemplate()}`);
try {
  const bare: number[] = [];
  for (let index = 0; index < 5; index++) {
    const started = performance.now();
    spawnSync(process.execPath, ["-e", "0"]);
    bare.push(performance.now() - started);
  }
  console.log(`${"node -e 0 (the machine's speed)".padEnd(48)} p50 ${median(bare).toFixed(0)} ms`);

  const postgres = await series("built start, PostgreSQL (baseline)", async () => {
    const database = await createTestDatabase("dl_bench_start");
    try {
      return await measureStart(process.execPath, ["apps/cli/bundle/dmarc-ledger.mjs", "start"], {
        DATABASE_URL: database.url,
        MASTER_KEY: testMasterKey,
      });
    } finally {
      await database.drop();
    }
  });
  const pnpmStart = await series(
    "pnpm start, fresh data directory",
    () => measureStart("pnpm", ["start"], freshDataDir()),
    postgres,
  );
  await series(
    "pnpm start, fresh data directory, no template",
    () => measureStart("pnpm", ["start"], freshDataDir(true)),
    postgres,
  );
  await series(
    "built start, fresh data directory",
    () => measureStart(process.execPath, ["apps/cli/bundle/dmarc-ledger.mjs", "start"], freshDataDir()),
    postgres,
  );
  await series(
    "node scripts/start.mjs (pnpm start without pnpm)",
    () => measureStart(process.execPath, ["scripts/start.mjs", "start"], freshDataDir()),
    postgres,
  );
  await series(
    "sources through tsx (what pnpm start ran before)",
    () =>
      measureStart(process.execPath, ["--import", "tsx", "apps/cli/src/main.ts", "start"], freshDataDir()),
    postgres,
  );
  // Another checkout (installed), say of the commit before this work: its `pnpm start`, as is.
  const other = process.env.BENCH_COMPARE_CHECKOUT;
  if (other) {
    await series(
      `pnpm start in ${other}`,
      () => measureStart("pnpm", ["start"], freshDataDir(), other),
      postgres,
    );
  }
  const verdict = (met: boolean) => (met ? "MET" : "MISSED");
  console.log(
    `pnpm start on a fresh data directory: ready in ${(pnpmStart.readyMs / 1000).toFixed(2)} s (goal 5 s: ${verdict(
      pnpmStart.readyMs <= 5000,
    )}, ${(pnpmStart.readyMs / median(bare)).toFixed(0)}x node -e 0), ${pnpmStart.idleRssMb.toFixed(0)} MB idle (goal 300 MB: ${verdict(
      pnpmStart.idleRssMb <= 300,
    )})`,
  );
  console.log(`load average at the end: ${load()}`);
} finally {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
