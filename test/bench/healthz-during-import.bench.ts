/**
 * Issue 40, point 2: `/healthz` of the running service (`dmarc-ledger start`, the bundle
 * production runs) while 2,000 report files are imported beside it, against `/healthz` of the
 * same service idle, measured just before in the same run. Embedded, the import is handed to the
 * service over its control socket and runs on its event loop; on PostgreSQL it runs in a process
 * of its own and the service's projector applies what it stores. Goal: p99 under 250 ms.
 * `BENCH_IMPORT_FILES` (default 2,000; 20 rows each, the usual shape of issue 27's bench).
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPgliteDataDir, createTestDatabase } from "@dmarc-ledger/db/testing";
import { builtEntry } from "../support/built-processes.js";
import { testMasterKey } from "../support/master-key.js";
import { aggregateReportXml } from "../support/report-xml.js";
import { type BuiltProcess, startBuiltProcess, waitFor } from "../support/start-built-process.js";

const fileCount = Number(process.env.BENCH_IMPORT_FILES ?? 2_000);
const goalP99Ms = 250;
const idleProbes = 200;
/** Between two probes during the import: a supervisor probes far less often. */
const probeGapMs = 20;

function writeReports(dir: string, count: number): void {
  mkdirSync(dir, { recursive: true });
  const day = 86_400;
  const base = 1_790_000_000 - (1_790_000_000 % day);
  for (let i = 0; i < count; i++) {
    const xml = aggregateReportXml({
      reportId: `healthz-bench-${i}`,
      domain: `bench-${i % 50}.com`,
      organization: `receiver${i % 40}.example`,
      begin: base + (i % 30) * day,
      end: base + (i % 30) * day + day - 1,
      rows: Array.from({ length: 20 }, (_, j) => ({
        sourceIp: `10.${i % 200}.${Math.floor(i / 200) % 250}.${j}`,
        count: ((i + j) % 40) + 1,
        dkim: j % 3 === 0 ? "fail" : "pass",
        spf: j % 4 === 0 ? "fail" : "pass",
      })),
    });
    writeFileSync(join(dir, `r-${String(i).padStart(5, "0")}.xml`), xml);
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function probe(origin: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${origin}/healthz`);
  await response.text();
  if (response.status !== 200) throw new Error(`/healthz answered ${response.status}`);
  return performance.now() - started;
}

/** Runs `dmarc-ledger import DIR` (the bundle) with `env`; resolves when it has exited 0. */
async function importFiles(dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const entry = await builtEntry("apps/cli/bundle/dmarc-ledger.mjs");
  const run = spawn(process.execPath, [...entry, "import", dir], {
    env: { PATH: process.env.PATH, MASTER_KEY: testMasterKey, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let errors = "";
  run.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    errors = (errors + chunk).slice(-4000);
  });
  const code = await new Promise<number | null>((resolve) => run.once("close", resolve));
  if (code !== 0) throw new Error(`import exited ${code}: ${errors}`);
}

const line = (label: string, times: number[], idleP99?: number) =>
  `${label.padEnd(44)} n ${String(times.length).padStart(4)}  p50 ${percentile(times, 50).toFixed(1).padStart(7)} ms  p99 ${percentile(times, 99).toFixed(1).padStart(7)} ms  max ${Math.max(
    ...times,
  )
    .toFixed(1)
    .padStart(7)} ms` +
  (idleP99 === undefined
    ? ""
    : `  ${(percentile(times, 99) / idleP99).toFixed(1)}x idle p99  goal p99 < ${goalP99Ms} ms: ${percentile(times, 99) < goalP99Ms ? "MET" : "MISSED"}`);

async function measure(name: string, env: NodeJS.ProcessEnv, filesDir: string): Promise<void> {
  const service: BuiltProcess = await startBuiltProcess(
    "apps/cli/dist/main.js",
    { ...env, PORT: "0", LOG_LEVEL: "warn" },
    ["start"],
  );
  try {
    const [, origin] = await waitFor(
      () => /listening on (http:\/\/[^/\s]+)\/api\//.exec(service.stderr()) ?? undefined,
      "the service to listen",
    );
    const idle: number[] = [];
    for (let i = 0; i < 20; i++) await probe(origin!); // warm the connection path
    for (let i = 0; i < idleProbes; i++) idle.push(await probe(origin!));
    const during: number[] = [];
    let importing = true;
    const started = performance.now();
    const imported = importFiles(filesDir, env).finally(() => {
      importing = false;
    });
    while (importing) {
      during.push(await probe(origin!));
      await new Promise((resolve) => setTimeout(resolve, probeGapMs));
    }
    await imported;
    const seconds = (performance.now() - started) / 1000;
    const idleP99 = percentile(idle, 99);
    console.log(line(`${name}: /healthz idle`, idle));
    console.log(line(`${name}: /healthz during the import (${seconds.toFixed(1)} s)`, during, idleP99));
  } finally {
    service.child.kill("SIGTERM");
    const code = await service.exited;
    if (code !== 0)
      console.log(`${name}: the service exited ${code} on SIGTERM: ${service.stderr().slice(-500)}`);
  }
}

const filesDir = mkdtempSync(join(tmpdir(), "dl-bench-healthz-"));
try {
  writeReports(filesDir, fileCount);
  console.log(
    `${fileCount.toLocaleString("en")} report files of 20 rows; /healthz every ${probeGapMs} ms during the import`,
  );
  const embedded = await createPgliteDataDir("dl-bench-healthz-");
  try {
    await measure(
      "embedded (PGlite, import handed over)",
      { DMARC_LEDGER_DATA_DIR: embedded.dataDir },
      filesDir,
    );
  } finally {
    await embedded.remove();
  }
  const postgres = await createTestDatabase("dl_bench_healthz");
  try {
    await measure("PostgreSQL (import in its own process)", { DATABASE_URL: postgres.url }, filesDir);
  } finally {
    await postgres.drop();
  }
} finally {
  rmSync(filesDir, { recursive: true, force: true });
}
