import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { processIsRunning } from "@dmarc-ledger/process/process-running";

/** PGlite has no locking of its own: two processes on one directory would corrupt it. */
export class DataDirLockedError extends Error {
  override readonly name = "DataDirLockedError";
  constructor(
    readonly dataDir: string,
    readonly ownerPid: number,
  ) {
    super(
      `The data directory ${dataDir} is in use by process ${ownerPid}. ` +
        "Stop that process, or point DMARC_LEDGER_DATA_DIR at another directory.",
    );
  }
}

const lockFileName = "dmarc-ledger.lock";

export interface DataDirLock {
  release(): void;
}

/**
 * Takes the directory's lock file, created exclusively. A lock left by a process that no longer
 * runs is taken over; one held by a live process (this one included) is an error.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const absolute = resolve(dataDir);
  mkdirSync(absolute, { recursive: true });
  const lockPath = join(absolute, lockFileName);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lockPath, String(process.pid), { flag: "wx" });
      return { release: () => releaseIfOurs(lockPath) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const owner = readOwner(lockPath);
      if (owner !== null && processIsRunning(owner)) throw new DataDirLockedError(absolute, owner);
      // Stale lock from a process that died: remove it and try once more.
      try {
        unlinkSync(lockPath);
      } catch {
        // Another process removed it first; the retry decides.
      }
    }
  }
  throw new DataDirLockedError(absolute, readOwner(lockPath) ?? -1);
}

function readOwner(lockPath: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(lockPath, "utf8"), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function releaseIfOurs(lockPath: string): void {
  if (readOwner(lockPath) === process.pid) {
    try {
      unlinkSync(lockPath);
    } catch {
      // Already gone.
    }
  }
}
