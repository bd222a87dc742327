/**
 * Issue 13, "a fast CLI": wall time of whole `dmarc-ledger` processes as an operator runs them,
 * on the build output (`node apps/cli/bundle/dmarc-ledger.mjs`, the bundle production runs) and
 * on the sources through tsx (what `pnpm dmarc-ledger` runs), against a bare
 * `node -e 0` measured in the same run. Targets: `--help` under 1 s, `tenant list` under 1.5 s.
 * `tenant list` is measured on PostgreSQL, on an embedded data directory with the service running
 * (the command goes over its control socket) and with it stopped (the command opens PGlite).
 * Besides wall time, the CPU time of each process (user + system, all its threads): on a shared
 * machine wall time follows the load, CPU time much less. `BENCH_RUNS=N` sets the runs per
 * command (default 7).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTestDatabase } from "@dmarc-ledger/db/testing";
import { testMasterKey } from "../support/master-key.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const runs = Number(process.env.BENCH_RUNS ?? 7);

/** Clock ticks a second, for the children's CPU times in /proc/self/stat (Linux only). */
const ticksPerSecond = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout) || 100;

/** CPU time of the children waited for so far, in ms: cutime + cstime; null where there is no /proc. */
function childrenCpuMs(): number | null {
  try {
    // The command name (field 2) may hold spaces; the fields after it are counted from its ")".
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / ticksPerSecond;
  } catch {
    return null;
  }
}

function run(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { ms: number; cpuMs: number | null; status: number | null } {
  const cpuBefore = childrenCpuMs();
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const cpuAfter = childrenCpuMs();
  if (result.status !== 0) {
    throw new Error(`${args.join(" ")} exited ${result.status}: ${String(result.stderr).slice(0, 400)}`);
  }
  const cpuMs = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
  return { ms, cpuMs, status: result.status };
}

const cpuColumn = (cpuMs: number[]) =>
  cpuMs.length === 0 ? "" : `  cpu p50 ${percentile(cpuMs, 50).toFixed(0).padStart(5)} ms`;
const cpuTimes = (results: { cpuMs: number | null }[]) =>
  results.flatMap((result) => (result.cpuMs === null ? [] : [result.cpuMs]));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function measure(
  label: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  baselineMs: number,
  targetMs?: number,
) {
  run(args, env); // warm the file cache
  const results = Array.from({ length: runs }, () => run(args, env));
  const times = results.map((result) => result.ms);
  const p50 = percentile(times, 50);
  const verdict =
    targetMs === undefined
      ? ""
      : p50 < targetMs
        ? `  target < ${targetMs} ms: MET`
        : `  target < ${targetMs} ms: MISSED`;
  console.log(
    `${label.padEnd(44)} p50 ${p50.toFixed(0).padStart(5)} ms  p95 ${percentile(times, 95).toFixed(0).padStart(5)} ms  ${(p50 / baselineMs).toFixed(1)}x node -e 0${cpuColumn(cpuTimes(results))}${verdict}`,
  );
}

console.log("building (pnpm build)…");
const built = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: root, stdio: "inherit" });
if (built.status !== 0) process.exit(1);

const bundle = ["apps/cli/bundle/dmarc-ledger.mjs"];
const sources = ["--import", "tsx", "apps/cli/src/main.ts"];
const dataDir = mkdtempSync(join(tmpdir(), "dl-bench-cli-"));
const pglite = { DMARC_LEDGER_DATA_DIR: dataDir };
const postgres = await createTestDatabase("dl_bench_cli");
const pg = { DATABASE_URL: postgres.url, MASTER_KEY: testMasterKey };
try {
  // A tenant to list, in each backend (this also runs the migrations once, outside the timings).
  run([...bundle, "tenant", "create", "bench"], pglite);
  run([...bundle, "tenant", "create", "bench"], pg);

  run(["-e", "0"]);
  const bare = Array.from({ length: runs }, () => run(["-e", "0"]));
  const baseline = percentile(
    bare.map((result) => result.ms),
    50,
  );
  console.log(
    `${"node -e 0 (baseline)".padEnd(44)} p50 ${baseline.toFixed(0).padStart(5)} ms  p95 ${percentile(
      bare.map((result) => result.ms),
      95,
    )
      .toFixed(0)
      .padStart(5)} ms  1.0x node -e 0${cpuColumn(cpuTimes(bare))}`,
  );
  measure("bundle: --help", [...bundle, "--help"], {}, baseline, 1000);
  measure("bundle: --version", [...bundle, "--version"], {}, baseline, 1000);
  measure("bundle: tenant list (PostgreSQL)", [...bundle, "tenant", "list"], pg, baseline, 1500);
  measure("bundle: tenant list (embedded PGlite)", [...bundle, "tenant", "list"], pglite, baseline, 1500);
  // The usual embedded case: the service runs and holds the data directory, and the command is
  // handed to it over the control socket, so no PGlite opens in the command's process.
  const service = spawn(process.execPath, [...bundle, "start"], {
    cwd: root,
    env: { ...process.env, ...pglite, PORT: "0", LOG_LEVEL: "warn" },
    stdio: "ignore",
  });
  try {
    for (let waited = 0; !existsSync(join(dataDir, "control.sock")); waited += 100) {
      if (waited > 60_000) throw new Error("the service did not open its control socket");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    measure(
      "bundle: tenant list (embedded, service running)",
      [...bundle, "tenant", "list"],
      pglite,
      baseline,
      1500,
    );
  } finally {
    service.kill("SIGTERM");
    await new Promise((resolve) => service.once("exit", resolve));
  }
  measure("sources via tsx: --help", [...sources, "--help"], {}, baseline);
  measure("sources via tsx: tenant list (PostgreSQL)", [...sources, "tenant", "list"], pg, baseline);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
  await postgres.drop();
}
