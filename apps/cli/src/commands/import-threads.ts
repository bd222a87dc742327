import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { CliError } from "../io.js";
import type { FileToImport, ImportedInput, NumberedFile, StoredFilesReport } from "./import-files.js";

/** What the command hands an import thread when it starts. */
export interface ImportThreadData {
  env: Record<string, string | undefined>;
  /** Parse workers of this thread (the setting's share). */
  parseThreads: number;
  /** Whether to start them at once (some file is too large to parse on the thread). */
  warm: boolean;
}

/** The command's answer to a thread's "next": the next files, none when all are handed out. */
export interface FilesForThread {
  kind: "files";
  files: NumberedFile[];
}

/** What an import thread tells the command. */
export type FromImportThread =
  | { kind: "next" }
  | { kind: "stored"; inputs: ImportedInput[]; filesRead: [file: number, inputs: number][] }
  | { kind: "warning"; text: string }
  | { kind: "failed"; message: string; exitCode: number | null };

/**
 * Files handed to a thread at a time: threads ask again as they go, so a thread that drew large
 * files takes fewer of them.
 */
const filesPerRequest = 32;

/**
 * Below this many files an import stores on the command's own thread: starting a thread loads
 * the intake and the runtime again (about 0.3 s of CPU), what storing 500 small reports takes.
 */
export const filesForThreads = 2_000;

/** More threads than this measured no faster: PostgreSQL's own work grows with them. */
const maxThreads = 4;

/**
 * How many import threads store the files: one (this thread) on the embedded database, which has
 * one connection, and inside the running service; else `asked`, or one per core (up to
 * maxThreads) for an import of filesForThreads files or more.
 */
export function importThreadCount(
  asked: number | undefined,
  files: number,
  where: { postgres: boolean; inService: boolean },
): number {
  if (asked !== undefined && asked > 1 && (!where.postgres || where.inService))
    throw new CliError(
      "--threads needs PostgreSQL (DATABASE_URL) and a command run on its own: the embedded database has one connection",
    );
  if (asked !== undefined) return asked;
  if (!where.postgres || where.inService || files < filesForThreads) return 1;
  return Math.min(availableParallelism(), maxThreads);
}

/**
 * Stores `files` on `threads` worker threads, each with its own runtime and connections, and on
 * this thread too when `here` is given (storeFiles with this thread's runtime), as several intake
 * processes do (each input acknowledged once durable; a report received twice is stored once,
 * whichever thread gets it first). All of them take the files from one queue, filesPerRequest at
 * a time. Reports each input and file to `report` as the threads do. If one fails, the others are
 * handed no more files, finish the inputs they hold, and the first failure is thrown.
 */
export async function storeOnThreads(
  files: readonly FileToImport[],
  threads: number,
  data: ImportThreadData,
  report: StoredFilesReport,
  warn: (text: string) => void,
  here?: (files: Iterable<NumberedFile>) => Promise<void>,
): Promise<void> {
  let handedOut = 0;
  let failure: Error | null = null;
  const nextFiles = (): NumberedFile[] => {
    const start = handedOut;
    const next = failure ? [] : files.slice(start, start + filesPerRequest);
    handedOut += next.length;
    return next.map((file, i) => ({ ...file, index: start + i }));
  };
  const runs = Array.from(
    { length: threads },
    () =>
      new Promise<void>((resolve, reject) => {
        const thread = startImportThread(data);
        let failedHere: Error | null = null;
        thread.on("message", (message: FromImportThread) => {
          switch (message.kind) {
            case "next":
              thread.postMessage({ kind: "files", files: nextFiles() } satisfies FilesForThread);
              break;
            case "stored":
              for (const input of message.inputs) report.input(input);
              for (const [file, inputs] of message.filesRead) report.fileRead(file, inputs);
              break;
            case "warning":
              warn(message.text);
              break;
            case "failed":
              failedHere =
                message.exitCode === null
                  ? new Error(message.message)
                  : new CliError(message.message, message.exitCode);
              failure ??= failedHere;
              break;
          }
        });
        thread.once("error", (error) => {
          failure ??= error;
          reject(error);
        });
        thread.once("exit", (code) => {
          if (failedHere) reject(failedHere);
          else if (code !== 0) reject(new Error(`an import thread stopped with exit code ${code}`));
          else resolve();
        });
      }),
  );
  if (here) {
    function* handedHere(): Generator<NumberedFile> {
      for (;;) {
        const next = nextFiles();
        if (next.length === 0) return;
        yield* next;
      }
    }
    runs.push(
      here(handedHere()).catch((error: unknown) => {
        failure ??= error instanceof Error ? error : new Error(String(error));
        throw error;
      }),
    );
  }
  const settled = await Promise.allSettled(runs);
  if (failure) throw failure;
  const rejected = settled.find((run) => run.status === "rejected");
  if (rejected) throw rejected.reason;
}

/**
 * The built thread beside this module, with its extension (dist/commands/import-thread.js, or
 * import-thread.mjs in the CLI bundle, which scripts/bundle-cli.mjs builds as an entry point of
 * its own); the TypeScript source through tsx when the process runs the sources (tests).
 */
function startImportThread(data: ImportThreadData): Worker {
  const here = import.meta.url;
  const built = here.match(/\.m?js$/)?.[0];
  if (built) return new Worker(new URL(`./import-thread${built}`, here), { workerData: data });
  const entry = new URL("./import-thread.ts", here).href;
  const tsx = import.meta.resolve("tsx/esm/api");
  return new Worker(
    `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`,
    { eval: true, workerData: data },
  );
}
