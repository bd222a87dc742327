/**
 * Issue 14, "bounded memory everywhere": peak RSS of the import (a child process running the CLI
 * `import`) and of the service (`dmarc-ledger start`: API and projector, running beside the import
 * and measured once it has caught up) for hostile inputs generated at run time in a temp dir:
 * one aggregate report of 1,000,000 rows (~460 MB of XML), a report whose org_name is one 210 MB
 * text node, a 100 MB mail holding a report, and, for comparison, a mail just under the mail
 * limit, which is accepted. Each input goes to a fresh PostgreSQL database. Figures are printed
 * against the budget of 512 MB per process (ratio = peak / budget; at most 1 meets it), and
 * against the peak of each process at rest (the service's with no input, the import of a
 * one-row report) measured in the same run. `BENCH_HOSTILE_ROWS=200000` for a quicker run.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTestDatabase } from "@dmarc-ledger/db/testing";
import { DEFAULT_MAX_MAIL_BYTES } from "@dmarc-ledger/dmarc-reports";
import { projectionsReached } from "@dmarc-ledger/projection-engine";
import { openRuntime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { testMasterKey } from "../support/master-key.js";
import { hostileFiles, writeBigMail, writeHugeTextNode, writeManyRows } from "./hostile/inputs.js";

const MB = 1024 * 1024;
const budget = 512 * MB;
const rows = Number(process.env.BENCH_HOSTILE_ROWS ?? 1_000_000);
const root = fileURLToPath(new URL("../../", import.meta.url));
const cli = join(root, "apps/cli/src/main.ts");
const peakHook = join(root, "test/bench/hostile/peak-rss-on-exit.ts");
const port = 24_010;

const log = (line: string) => console.log(line);
const progress = (line: string) => process.stderr.write(`  … ${line}\n`);
const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`;

interface Child {
  process: ChildProcess;
  output: () => string;
  /** Resolves with the child's peak RSS in bytes once it has exited. */
  peak: Promise<number>;
}

function run(args: string[], env: NodeJS.ProcessEnv, peakFile: string): Child {
  const child = spawn(process.execPath, ["--import", "tsx", "--import", peakHook, cli, ...args], {
    cwd: root,
    env: { ...process.env, ...env, PEAK_RSS_FILE: peakFile, LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const peak = once(child, "exit").then(() => Number(readFileSync(peakFile, "utf8")));
  return { process: child, output: () => output, peak };
}

async function waitForOutput(child: Child, text: string): Promise<void> {
  for (let waited = 0; !child.output().includes(text); waited += 100) {
    if (child.process.exitCode !== null) throw new Error(`service exited: ${child.output()}`);
    if (waited > 120_000) throw new Error(`service did not start: ${child.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function caughtUp(databaseUrl: string): Promise<void> {
  const runtime = await openRuntime({ DATABASE_URL: databaseUrl });
  try {
    const head = await runtime.store.headPosition();
    if (head === null) return;
    while (!(await projectionsReached(runtime.db, allProjections, head))) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    await runtime.close();
  }
}

interface Measured {
  outcome: string;
  importPeak: number;
  servicePeak: number;
  seconds: number;
}

/** A fresh database; the service started on it; the file imported beside it; the service stopped once caught up. */
async function measure(dir: string, file: string): Promise<Measured> {
  const database = await createTestDatabase("dl_bench_hostile");
  const env = { DATABASE_URL: database.url, MASTER_KEY: testMasterKey, PORT: String(port) };
  const started = Date.now();
  try {
    const service = run(["start"], env, join(dir, "service.peak"));
    await waitForOutput(service, "listening on");
    // --no-wait: the intake's memory on the hostile input, not the projector's after it.
    const importing = run(["import", "--no-wait", file], env, join(dir, "import.peak"));
    const importPeak = await importing.peak;
    const outcome =
      importing
        .output()
        .split("\n")
        .find((line) => line.startsWith(file))
        ?.slice(file.length + 2) ?? importing.output().trim().slice(0, 300);
    await caughtUp(database.url);
    service.process.kill("SIGTERM");
    const servicePeak = await service.peak;
    return { outcome, importPeak, servicePeak, seconds: (Date.now() - started) / 1000 };
  } finally {
    await database.drop();
  }
}

const dir = mkdtempSync(join(tmpdir(), "dl-bench-hostile-"));
try {
  const files = hostileFiles(dir);
  const oneRow = join(dir, "one-row.xml");
  const mailAtLimit = join(dir, "mail-at-limit.eml");
  progress(`writing the inputs into ${dir}`);
  await writeManyRows(oneRow, 1);
  await writeManyRows(files.manyRows, rows);
  await writeHugeTextNode(files.hugeText, 210 * MB);
  await writeBigMail(files.bigMail, 100 * MB);
  await writeBigMail(mailAtLimit, DEFAULT_MAX_MAIL_BYTES - MB);

  const cases: [string, string][] = [
    ["baseline: a one-row report", oneRow],
    [`${rows.toLocaleString("en")}-row report`, files.manyRows],
    ["210 MB org_name text node", files.hugeText],
    ["100 MB mail holding a report", files.bigMail],
    [`mail under the limit (${mb(DEFAULT_MAX_MAIL_BYTES)})`, mailAtLimit],
  ];
  const results: [string, number, Measured][] = [];
  for (const [name, file] of cases) {
    progress(`${name}: importing beside the service`);
    const measured = await measure(dir, file);
    results.push([name, statSync(file).size, measured]);
    progress(`${name}: ${measured.outcome} (${measured.seconds.toFixed(0)} s)`);
  }

  const baseline = results[0]![2];
  log(`Budget: ${mb(budget)} per process. Ratio = peak RSS / budget (at most 1.00 meets it).`);
  log(`Baseline (one-row report): import ${mb(baseline.importPeak)}, service ${mb(baseline.servicePeak)}.`);
  log("");
  log("| input | size | import peak | ratio | service peak | ratio | outcome |");
  log("|---|---|---|---|---|---|---|");
  let over = 0;
  for (const [name, size, m] of results) {
    const importRatio = m.importPeak / budget;
    const serviceRatio = m.servicePeak / budget;
    if (importRatio > 1 || serviceRatio > 1) over++;
    log(
      `| ${name} | ${mb(size)} | ${mb(m.importPeak)} | ${importRatio.toFixed(2)} | ${mb(m.servicePeak)} | ${serviceRatio.toFixed(2)} | ${m.outcome} |`,
    );
  }
  log("");
  log(
    over === 0
      ? "Every process stayed within the budget."
      : `${over} input(s) took a process past the budget.`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
