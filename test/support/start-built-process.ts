import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { builtEntry } from "./built-processes.js";
import { testMasterKey } from "./master-key.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

export interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

export interface BuiltProcess {
  child: ChildProcess;
  /** Its JSON log lines (stdout), as they come. */
  lines: LogLine[];
  /** What it wrote to stderr (the last 64 KiB), for failure messages. */
  stderr(): string;
  /** The exit code, -1 when it was ended by a signal (then `child.signalCode` says which). */
  exited: Promise<number>;
}

/**
 * One of our processes, built (`entry`, such as "apps/intake/dist/main.js"), as production runs
 * it, with `args`, with only PATH, the run's MASTER_KEY and `env` in its environment; its stdout read as JSON log lines.
 */
export async function startBuiltProcess(
  entry: string,
  env: NodeJS.ProcessEnv,
  args: readonly string[] = [],
): Promise<BuiltProcess> {
  const child = spawn(process.execPath, [...(await builtEntry(entry)), ...args], {
    cwd: repoRoot,
    // MASTER_KEY: required with DATABASE_URL; a test of its absence sets it to "".
    env: { PATH: process.env.PATH, MASTER_KEY: testMasterKey, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // A test run that dies must not leave a process behind (an intake reconnecting forever).
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const lines: LogLine[] = [];
  let pending = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    pending += chunk;
    const parts = pending.split("\n");
    pending = parts.pop()!;
    for (const part of parts) if (part.trim()) lines.push(JSON.parse(part) as LogLine);
  });
  // Read as it comes, so that a chatty stderr cannot fill its pipe and stall the process.
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-65_536);
  });
  // "close", not "exit": by then every log line it wrote has been read.
  const exited = new Promise<number>((resolve) =>
    child.once("close", (code) => {
      process.off("exit", killOnExit);
      resolve(code ?? -1);
    }),
  );
  return { child, lines, stderr: () => stderr, exited };
}

/** Polls `find` every 50 ms until it returns something (up to 30 s). */
export async function waitFor<T>(
  find: () => T | undefined | Promise<T | undefined>,
  what: string,
): Promise<T> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const found = await find();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}
