/**
 * Issue 27: the import of many small reports (20 rows each, the usual shape), end to end to
 * queryable, against Debian's dmarcts-report-parser (Perl, into PostgreSQL) on the same files in
 * the same run (target: ours >= 10x its rate); then the same reports by SMTP into one, two and
 * four intake processes beside one projector process, until the read models show them.
 *
 * Ours: `dmarc-ledger import DIR` (the CLI bundle production runs, apps/cli/bundle, on
 * PostgreSQL), which returns once the read models show everything it stored; run before and
 * after theirs, each into a fresh database. Theirs: `dmarcts-report-parser -x 'DIR/*.xml'` into a
 * database of its own (apt-get install dmarcts-report-parser libdbd-pg-perl, as root). Each run
 * has a fresh database. Beside each time, the CPU the program and PostgreSQL spent (/proc,
 * cpu-seconds.ts), and the two programs' CPU per report: the ratio of the rates is that of the CPU
 * times the cores each keeps busy, and dmarcts-report-parser keeps at most one busy, idle while it
 * waits on a round trip or a commit, so the ratio of the rates moves with the machine's latency.
 * `BENCH_REPORTS` (default 10,000), `BENCH_ROWS` (default 20), `BENCH_SMTP_CONNECTIONS` (per
 * intake process, default 4).
 */
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { projectionsReached } from "@dmarc-ledger/projection-engine";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { sql } from "kysely";
import MailComposer from "nodemailer/lib/mail-composer";
import { builtEntry } from "../support/built-processes.js";
import { testMasterKey } from "../support/master-key.js";
import { aggregateReportXml } from "../support/report-xml.js";
import { type BuiltProcess, startBuiltProcess, waitFor } from "../support/start-built-process.js";
import { type CpuReading, cpuSince, readCpu } from "./cpu-seconds.js";

const reports = Number(process.env.BENCH_REPORTS ?? 10_000);
const rowsPerReport = Number(process.env.BENCH_ROWS ?? 20);
const connections = Number(process.env.BENCH_SMTP_CONNECTIONS ?? 4);
const target = 10;
const dmarcts = "/usr/sbin/dmarcts-report-parser";

const log = (line: string) => console.log(line);
const progress = (line: string) => process.stderr.write(`  … ${line}\n`);
const rate = (count: number, seconds: number) => Math.round(count / seconds).toLocaleString("en");

/** `count` reports of `rows` rows, spread over 50 domains, 40 reporters and 30 days. */
function writeReports(
  dir: string,
  count: number,
  rows: number,
  tag: string,
): { files: string[]; messages: number } {
  mkdirSync(dir, { recursive: true });
  const day = 86_400;
  const base = 1_790_000_000 - (1_790_000_000 % day);
  const files: string[] = [];
  let messages = 0;
  for (let i = 0; i < count; i++) {
    const reportRows = Array.from({ length: rows }, (_, j) => ({
      sourceIp: `10.${i % 200}.${Math.floor(i / 200) % 250}.${j}`,
      count: ((i + j) % 40) + 1,
      dkim: j % 3 === 0 ? "fail" : "pass",
      spf: j % 4 === 0 ? "fail" : "pass",
    }));
    messages += reportRows.reduce((sum, row) => sum + row.count, 0);
    const xml = aggregateReportXml({
      reportId: `${tag}-${i}`,
      domain: `bench-${i % 50}.com`,
      organization: `receiver${i % 40}.example`,
      begin: base + (i % 30) * day,
      end: base + (i % 30) * day + day - 1,
      rows: reportRows,
    });
    const file = join(dir, `${tag}-${String(i).padStart(6, "0")}.xml`);
    writeFileSync(file, xml);
    files.push(file);
  }
  return { files, messages };
}

/** The messages agg_domain counts: what a by-domain query would answer. */
async function messagesCounted(db: Runtime["db"]): Promise<number> {
  const { rows } = await sql<{ n: string | null }>`select sum(volume)::text as n from agg_domain`.execute(db);
  return Number(rows[0]!.n ?? 0);
}

/**
 * Reads every file once, so that a timed run starts with them in the page cache: this machine
 * pages out what is untouched for a minute (DAMON), and the import after dmarcts-report-parser's
 * run read them from disk (11.9 s against 9.4 s before it, twice).
 */
function warm(dir: string): void {
  for (const name of readdirSync(dir)) readFileSync(join(dir, name));
}

/** A timed run: its wall-clock seconds, and the CPU seconds of the program and of PostgreSQL. */
interface Timed {
  seconds: number;
  cpu: CpuReading;
}

async function timeOurs(dir: string, messages: number): Promise<Timed> {
  const database = await createTestDatabase("dl_bench_ours");
  try {
    // A deployment's database exists already: its tables are made before the clock starts.
    await (
      await openRuntime({}, { database: { kind: "postgres", url: database.url }, eventStoreUrl: null })
    ).close();
    // The bundle, as production runs it (docs/operations.md): it starts in about 0.25 s less CPU
    // than the per-package build output.
    const entry = await builtEntry("apps/cli/bundle/dmarc-ledger.mjs");
    warm(dir);
    const cpuBefore = readCpu();
    const started = performance.now();
    // Its output is a line per report for a person: not read (startBuiltProcess reads JSON).
    const run = spawn(process.execPath, [...entry, "import", dir], {
      env: { PATH: process.env.PATH, MASTER_KEY: testMasterKey, DATABASE_URL: database.url },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let errors = "";
    run.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      errors += chunk;
    });
    const [code] = (await once(run, "close")) as [number | null];
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuSince(cpuBefore);
    if (code !== 0) throw new Error(`dmarc-ledger import exited ${code}: ${errors}`);
    // Queryable means counted: every message of every report in the read models, once.
    const runtime = await openRuntime(
      {},
      { database: { kind: "postgres", url: database.url }, eventStoreUrl: null },
    );
    try {
      const counted = await messagesCounted(runtime.db);
      if (counted !== messages)
        throw new Error(`dmarc-ledger import counted ${counted} messages of ${messages}`);
    } finally {
      await runtime.close();
    }
    return { seconds, cpu };
  } finally {
    await database.drop();
  }
}

function timeTheirs(dir: string, database: TestDatabase): Timed {
  const url = new URL(database.url);
  const conf = mkdtempSync(join(tmpdir(), "dl-dmarcts-"));
  writeFileSync(
    join(conf, "dmarcts-report-parser.conf"),
    [
      "$debug = 0;",
      "$delete_reports = 0;",
      "$dbtype = 'Pg';",
      `$dbname = '${url.pathname.slice(1)}';`,
      `$dbuser = '${decodeURIComponent(url.username) || "postgres"}';`,
      `$dbpass = '${decodeURIComponent(url.password)}';`,
      `$dbhost = '${url.hostname}';`,
      `$dbport = '${url.port || "5432"}';`,
      "$imapreadfolder = 'dmarc';",
      "$maxsize_xml = 50000;",
      "$compress_xml = 0;",
      "$delete_failed = 0;",
      "1;",
      "",
    ].join("\n"),
  );
  try {
    warm(dir);
    const cpuBefore = readCpu();
    const started = performance.now();
    // It globs the pattern itself: 10,000 names need not fit in one command line.
    const result = spawnSync(dmarcts, ["-x", join(dir, "*.xml")], { cwd: conf, encoding: "utf8" });
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuSince(cpuBefore);
    if (result.status !== 0)
      throw new Error(`dmarcts-report-parser exited ${result.status}: ${result.stderr}`);
    return { seconds, cpu };
  } finally {
    rmSync(conf, { recursive: true, force: true });
  }
}

async function theirRows(database: TestDatabase): Promise<number> {
  const runtime = await openRuntime(
    {},
    { database: { kind: "postgres", url: database.url }, eventStoreUrl: null },
  );
  try {
    const { rows } = await sql<{
      n: string;
    }>`select count(*)::text as n from rptrecord`.execute(runtime.db);
    return Number(rows[0]!.n);
  } finally {
    await runtime.close();
  }
}

function compose(file: string): Promise<Buffer> {
  return new MailComposer({
    from: "noreply-dmarc@receiver.example",
    to: "rua@reports.bench",
    subject: "Report",
    attachments: [{ filename: "report.xml", content: readFileSync(file) }],
  })
    .compile()
    .build();
}

function send(port: number, mails: Buffer[]): Promise<{ seconds: number; responses: string[] }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./intake/smtp-sender.mjs", import.meta.url), {
      workerData: { port, connections, mails: mails.map((mail) => new Uint8Array(mail)) },
    });
    worker.once("message", resolve);
    worker.once("error", reject);
  });
}

/** Reports by SMTP into `intakes` intake processes beside one projector, until queryable. */
async function timeIntakes(intakes: number, mails: Buffer[], messages: number): Promise<number> {
  const database = await createTestDatabase(`dl_bench_fleet_${intakes}`);
  const processes: BuiltProcess[] = [];
  try {
    const runtime = await openRuntime(
      {},
      { database: { kind: "postgres", url: database.url }, eventStoreUrl: null },
    );
    try {
      const env = { DATABASE_URL: database.url, LOG_LEVEL: "warn" };
      processes.push(
        await startBuiltProcess("apps/projector/dist/main.js", { ...env, DNS_NAMESERVERS: "127.0.0.1:9" }),
      );
      const ports: number[] = [];
      for (let i = 0; i < intakes; i++) {
        const intake = await startBuiltProcess("apps/intake/dist/main.js", {
          ...env,
          LOG_LEVEL: "info",
          REPORTS_DOMAIN: "reports.bench",
          SMTP_HOST: "127.0.0.1",
          SMTP_PORT: "0",
        });
        processes.push(intake);
        const listening = await waitFor(
          () => intake.lines.find((line) => line.msg === "SMTP intake listening"),
          "an SMTP intake to listen",
        );
        ports.push(listening.port as number);
      }
      const started = performance.now();
      const shares = ports.map((_, i) => mails.filter((_, n) => n % intakes === i));
      const sent = await Promise.all(ports.map((port, i) => send(port, shares[i]!)));
      const refused = sent.flatMap((s) => s.responses).filter((response) => !response.startsWith("250"));
      if (refused.length > 0) throw new Error(`${refused.length} mails refused: ${refused[0]}`);
      const head = (await runtime.store.headPosition())!;
      while (!(await projectionsReached(runtime.db, allProjections, head)))
        await new Promise((resolve) => setTimeout(resolve, 20));
      const seconds = (performance.now() - started) / 1000;
      const counted = await messagesCounted(runtime.db);
      if (counted !== messages)
        throw new Error(`${intakes} intake process(es) counted ${counted} messages of ${messages}`);
      return seconds;
    } finally {
      await runtime.close();
    }
  } finally {
    for (const process of processes) {
      process.child.kill("SIGTERM");
      await process.exited;
    }
    await database.drop();
  }
}

/** What a run cost in CPU, and how many cores it kept busy on average. */
function cpuLine(run: Timed): string {
  const total = run.cpu.children + run.cpu.postgres;
  return `CPU ${run.cpu.children.toFixed(1)} s its own + ${run.cpu.postgres.toFixed(1)} s PostgreSQL's (${(total / run.seconds).toFixed(2)} cores busy)`;
}

async function main(): Promise<void> {
  if (!existsSync(dmarcts))
    throw new Error(
      "dmarcts-report-parser is not installed: apt-get install -y dmarcts-report-parser libdbd-pg-perl (as root)",
    );
  const work = mkdtempSync(join(tmpdir(), "dl-bench-fleet-"));
  try {
    const rows = reports * rowsPerReport;
    log(
      `${reports.toLocaleString("en")} reports of ${rowsPerReport} rows (${rows.toLocaleString("en")} rows)`,
    );
    const dir = join(work, "reports");
    const { files, messages } = writeReports(dir, reports, rowsPerReport, "bench");
    // Ours before and after theirs: the shared machine's speed drifts over a minute or two (the
    // same import took 8.0 s and 10.5 s a quarter of an hour apart), and a ratio from one run of
    // ours could be the drift's. Both ratios are printed; the target is met only if both meet it.
    progress("dmarc-ledger import (before)");
    const oursBefore = await timeOurs(dir, messages);
    progress("dmarcts-report-parser");
    const theirsDb = await createTestDatabase("dl_bench_dmarcts");
    let theirs: Timed;
    try {
      theirs = timeTheirs(dir, theirsDb);
      const stored = await theirRows(theirsDb);
      if (stored !== rows) throw new Error(`dmarcts-report-parser stored ${stored} rows of ${rows}`);
    } finally {
      await theirsDb.drop();
    }
    progress("dmarc-ledger import (after)");
    const oursAfter = await timeOurs(dir, messages);
    log(
      `dmarcts-report-parser: ${theirs.seconds.toFixed(1)} s, ${rate(reports, theirs.seconds)} reports/s, ${rate(rows, theirs.seconds)} rows/s; ${cpuLine(theirs)}`,
    );
    for (const [when, ours] of [
      ["before", oursBefore],
      ["after", oursAfter],
    ] as const) {
      log(
        `dmarc-ledger import (${when} it): ${ours.seconds.toFixed(1)} s, ${rate(reports, ours.seconds)} reports/s, ${rate(rows, ours.seconds)} rows/s, ${(theirs.seconds / ours.seconds).toFixed(1)}x its rate; ${cpuLine(ours)}`,
      );
    }
    const ratio = theirs.seconds / Math.max(oursBefore.seconds, oursAfter.seconds);
    log(
      `ratio, the slower of ours: ${ratio.toFixed(1)}x dmarcts-report-parser's rate (target >= ${target}x): ${ratio >= target ? "met" : "NOT met"}`,
    );
    // The rate's ratio is the CPU's ratio times the cores each keeps busy: where theirs waits on
    // round trips and commits (cores idle), the rate's ratio is higher than where it is CPU-bound.
    const cpuPerReport = (run: Timed) => ((run.cpu.children + run.cpu.postgres) / reports) * 1000;
    const ours = cpuPerReport(oursBefore) > cpuPerReport(oursAfter) ? oursBefore : oursAfter;
    log(
      `CPU per report, program and PostgreSQL: dmarcts-report-parser ${cpuPerReport(theirs).toFixed(2)} ms, ours ${cpuPerReport(ours).toFixed(2)} ms (the costlier of ours), theirs over ours ${(cpuPerReport(theirs) / cpuPerReport(ours)).toFixed(1)}x`,
    );

    progress("composing mails");
    const mails = await Promise.all(files.map(compose));
    for (const intakes of [1, 2, 4]) {
      progress(`${intakes} intake process(es)`);
      const seconds = await timeIntakes(intakes, mails, messages);
      log(
        `SMTP into ${intakes} intake process(es) + 1 projector, to queryable: ${seconds.toFixed(1)} s, ${rate(reports, seconds)} reports/s, ${rate(rows, seconds)} rows/s`,
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
