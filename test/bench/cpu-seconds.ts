/**
 * CPU time from /proc (Linux), for benches that compare programs whose speed on this machine may
 * be bound by different things: the processes this one started and has waited for (a child's
 * threads included: the kernel adds an exited child's time to its parent's), and PostgreSQL's
 * server (the postmaster, its live backends, and the backends that exited, which the postmaster
 * has waited for). Read before and after the measured run; nothing else should run meanwhile.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

const ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

interface ProcessTicks {
  command: string;
  /** Its own user and system time. */
  own: number;
  /** The user and system time of its children that exited and that it waited for. */
  waitedChildren: number;
}

function ticksOf(pid: string): ProcessTicks | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null; // exited between the listing and the read
  }
  // The command is in parentheses and may hold spaces; the fields after it are space-separated,
  // from the third (state): utime is the 14th field, stime, cutime and cstime follow.
  const close = stat.lastIndexOf(")");
  const fields = stat.slice(close + 2).split(" ");
  const field = (n: number) => Number(fields[n - 3]);
  return {
    command: stat.slice(stat.indexOf("(") + 1, close),
    own: field(14) + field(15),
    waitedChildren: field(16) + field(17),
  };
}

/** CPU seconds: of this process's waited-for children, and of PostgreSQL's processes. */
export interface CpuReading {
  children: number;
  postgres: number;
}

/** The CPU seconds so far. */
export function readCpu(): CpuReading {
  let postgres = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const ticks = ticksOf(pid);
    if (ticks?.command === "postgres") postgres += ticks.own + ticks.waitedChildren;
  }
  return { children: ticksOf("self")!.waitedChildren / ticksPerSecond, postgres: postgres / ticksPerSecond };
}

/** The CPU seconds since `before`. */
export function cpuSince(before: CpuReading): CpuReading {
  const now = readCpu();
  return { children: now.children - before.children, postgres: now.postgres - before.postgres };
}
