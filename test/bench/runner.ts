import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { benchEntryPoints } from "./entry-points.js";
import { figuresBody, replaceFigures } from "./figures-block.js";

/** The variables that size or steer a benchmark run, recorded beside its figures. */
const benchSetting = /^(?:BENCH|LOAD|UPKEEP)_/;
const tsx = fileURLToPath(import.meta.resolve("tsx"));

export interface BenchRunOptions {
  root: string;
  /** Runs only the entries whose path inside the repository contains it. */
  filter?: string;
  env?: NodeJS.ProcessEnv;
  /** Where a run's output goes as it comes (the terminal). */
  write?: (chunk: Buffer) => void;
}

/**
 * Runs each entry point in its own process (so that peak RSS figures are its own), its output
 * streamed as it comes; after each that succeeds, its figures block in docs/benchmarks.md is
 * rewritten with what it printed. Resolves with the entries that failed.
 */
export async function runBenches(options: BenchRunOptions): Promise<string[]> {
  const env = options.env ?? process.env;
  const write = options.write ?? ((chunk: Buffer) => process.stdout.write(chunk));
  const docPath = join(options.root, "docs", "benchmarks.md");
  const failed: string[] = [];
  for (const entry of benchEntryPoints(options.root)) {
    if (options.filter && !entry.includes(options.filter)) continue;
    write(Buffer.from(`\n=== ${entry}\n`));
    const chunks: Buffer[] = [];
    const child = spawn(process.execPath, ["--import", tsx, "--expose-gc", entry], {
      cwd: options.root,
      env,
      stdio: ["inherit", "pipe", "inherit"],
    });
    child.stdout.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      write(chunk);
    });
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    if (code !== 0) {
      failed.push(entry);
      write(Buffer.from(`=== ${entry} failed (exit ${code})\n`));
      continue;
    }
    const settings = Object.fromEntries(
      Object.entries(env)
        .filter((pair): pair is [string, string] => benchSetting.test(pair[0]) && pair[1] !== undefined)
        .sort(([a], [b]) => a.localeCompare(b)),
    );
    const body = figuresBody({
      entry,
      output: Buffer.concat(chunks).toString("utf8"),
      date: new Date(),
      node: process.version,
      cores: availableParallelism(),
      load: loadavg()[0]!,
      settings,
    });
    writeFileSync(docPath, replaceFigures(readFileSync(docPath, "utf8"), entry, body));
    write(Buffer.from(`=== ${entry}: figures written to docs/benchmarks.md\n`));
  }
  return failed;
}
