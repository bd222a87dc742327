import { readFileSync } from "node:fs";

/**
 * Whether the process with this id still runs. `kill(pid, 0)` alone says yes for a zombie: a
 * process that has exited and waits for its parent to collect it. A service orphaned when its
 * package manager went away is re-parented, and its new parent (init, a container's first
 * process, a supervisor) may collect it seconds later or never; it holds nothing by then, so
 * a zombie counts as stopped. A process of another user (EPERM) runs.
 */
export function processIsRunning(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return !hasExited(pid);
}

/** Linux's view of the process's state (`Z` zombie, `X` dead); elsewhere, not known. */
function hasExited(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return false;
  }
  // "pid (command) state …": the command may hold spaces and parentheses, the state follows the last.
  const state = stat.charAt(stat.lastIndexOf(")") + 2);
  return state === "Z" || state === "X";
}
