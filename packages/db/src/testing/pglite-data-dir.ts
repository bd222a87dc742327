import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { processIsRunning } from "@dmarc-ledger/process/process-running";
import { type Database, openDatabase } from "../open-database.js";
import { createPgliteDatabase } from "../pglite-initdb.js";

/**
 * Names a directory of the test run (vitest's global setup makes it: test/support/global-setup.ts)
 * where the first test that needs a fresh PGlite database runs initdb, once for the run, and every
 * other test copies what it made. initdb costs 7 to 8 s of CPU on the 2-core test machine; the
 * copy 0.3 s, and it is the same fresh database.
 */
export const pgliteTemplateVariable = "DMARC_LEDGER_TEST_PGLITE_TEMPLATE";

export interface TestDataDir {
  dataDir: string;
  remove(): void;
}

/**
 * A new PGlite data directory holding a fresh, empty database, as `openDatabase` makes in an empty
 * directory: a copy of the run's template. Without a run directory (a script outside vitest) the
 * directory is empty, and the database is made when it is first opened.
 */
export async function createPgliteDataDir(prefix = "dl-test-"): Promise<TestDataDir> {
  const run = process.env[pgliteTemplateVariable];
  const template = run ? await runTemplate(run) : null;
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  if (template) cpSync(template, dataDir, { recursive: true });
  return { dataDir, remove: () => rmSync(dataDir, { recursive: true, force: true }) };
}

/** A fresh PGlite database in a directory of its own (createPgliteDataDir), removed on close. */
export async function openTestPglite<Schema = unknown>(): Promise<Database<Schema>> {
  const { dataDir, remove } = await createPgliteDataDir("dl-pglite-");
  try {
    const database = await openDatabase<Schema>({ kind: "pglite", dataDir });
    return {
      ...database,
      close: async () => {
        await database.close();
        remove();
      },
    };
  } catch (error) {
    remove();
    throw error;
  }
}

let making: Promise<string> | undefined;

/**
 * The run's template, made by whichever test process asks first; the others wait for it. The
 * maker holds `lock` (mkdir is atomic) and renames the finished directory into place, so that
 * `data` exists only whole. A maker that died leaves its lock to the next process that asks.
 */
function runTemplate(run: string): Promise<string> {
  making ??= (async () => {
    const template = join(run, "data");
    const lock = join(run, "lock");
    mkdirSync(run, { recursive: true });
    for (;;) {
      if (existsSync(template)) return template;
      try {
        mkdirSync(lock);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        if (!ownerAlive(lock)) rmSync(lock, { recursive: true, force: true });
        else await sleep(100);
        continue;
      }
      writeFileSync(join(lock, "pid"), String(process.pid));
      try {
        const staging = mkdtempSync(join(run, "making-"));
        // As the service makes its database: in a child process, which takes initdb's memory
        // with it (a test process keeps running files for the whole run).
        await createPgliteDatabase(staging);
        renameSync(staging, template);
        return template;
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
    }
  })();
  return making;
}

function ownerAlive(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(lock, "pid"), "utf8"));
  } catch {
    // The lock is made a moment before its pid is written: a minute without one is a dead maker.
    try {
      return Date.now() - statSync(lock).mtimeMs < 60_000;
    } catch {
      return false;
    }
  }
  return processIsRunning(pid);
}
