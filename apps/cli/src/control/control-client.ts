import { existsSync } from "node:fs";
import { connect } from "node:net";
import { userInfo } from "node:os";
import type { CliIO } from "../io.js";
import { type ControlAnswer, type ControlRequest, embeddedControlSocketPath } from "./protocol.js";

/**
 * Hands a command to the service running on the embedded data directory, when one answers on its
 * control socket. Returns the command's exit status, or null when no service answers (no socket,
 * or one left by a process that died): then the command runs here.
 */
export async function runInRunningService(
  env: NodeJS.ProcessEnv,
  argv: string[],
  io: CliIO,
): Promise<number | null> {
  // `start` too: the service answers that it runs already (control-server.ts).
  if (env.DATABASE_URL || !opensTheDataDirectory(argv)) return null;
  const path = embeddedControlSocketPath(env);
  if (!existsSync(path)) return null;
  return new Promise((resolve, reject) => {
    let connected = false;
    let exit: number | null = null;
    let buffered = "";
    const socket = connect(path, () => {
      connected = true;
      const request: ControlRequest = {
        argv,
        cwd: process.cwd(),
        caller: { pid: process.pid, user: userName() },
      };
      socket.write(`${JSON.stringify(request)}\n`);
    });
    socket.on("data", (chunk) => {
      buffered += String(chunk);
      for (let newline = buffered.indexOf("\n"); newline !== -1; newline = buffered.indexOf("\n")) {
        const answer = JSON.parse(buffered.slice(0, newline)) as ControlAnswer;
        buffered = buffered.slice(newline + 1);
        if ("out" in answer) io.out(answer.out);
        else if ("err" in answer) io.err(answer.err);
        else exit = answer.exit;
      }
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      // Nobody listens: a socket left behind. The command opens the data directory itself.
      if (!connected && (error.code === "ECONNREFUSED" || error.code === "ENOENT")) resolve(null);
      else reject(error);
    });
    socket.on("close", () => {
      if (connected) {
        if (exit === null) reject(new Error("the running service closed the control socket mid-command"));
        else resolve(exit);
      }
    });
  });
}

/**
 * Commands that never open the data directory (DNS checks, help, the version) run in this process,
 * with its environment, beside a service or not: handed over, they read the service's settings
 * (DNS_NAMESERVERS, REPORTS_DOMAIN…) instead of the caller's.
 */
const withoutDataDirectory = [["spf"], ["domain", "status"]];

function opensTheDataDirectory(argv: string[]): boolean {
  if (argv.length === 0 || argv.some((arg) => ["-h", "--help", "-V", "--version"].includes(arg)))
    return false;
  return !withoutDataDirectory.some((words) => words.every((word, index) => argv[index] === word));
}

/** Whether a service listens on the control socket at `path` (not a socket left by one that died). */
export function serviceAnswers(path: string): Promise<boolean> {
  if (!existsSync(path)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = connect(path, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

function userName(): string {
  try {
    return userInfo().username;
  } catch {
    // A uid without a passwd entry (some containers).
    return String(process.getuid?.() ?? "unknown");
  }
}
