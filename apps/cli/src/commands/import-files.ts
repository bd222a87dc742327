import { createReadStream, readFileSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import type { IngestedItem, InputBytes, IntakeDeps, ReceivedInput } from "@dmarc-ledger/intake";
import type { Runtime } from "@dmarc-ledger/runtime";
import { CliError } from "../io.js";
import { catchUpTenantTables } from "../tenant-ref.js";
import { OrderedWindow } from "./ordered-window.js";

/**
 * Inputs being received at once, and their bytes (each holds its bytes and reports in memory, the
 * reports within the intake's HoldBudget). Enough that inputs share commits (group commit) while
 * the parse workers work on the next: on 2 cores, 4 at once imported the corpus mix at 13 ms a
 * mail, 8 at 10.5 ms, 16 at 9.3 ms. A received input waits for those before it to be reported
 * without holding a place (see OrderedWindow): a window that waited for its oldest input stalled
 * behind each large report, and the corpus mix went from 58% to about 68% of parse-only. At 32
 * (and groups of up to 32) 2,000 reports of 20 rows made 232 commits instead of 313 and took
 * about 0.2 s less CPU (issue 27). Later, 10,000 such reports were stored in 7.2 s at 32, 6.45 s
 * at 64 (groups of up to 64) and 5.9 to 6.0 s at 128 (groups of up to 64). Per import thread.
 */
const importWindow = { running: 128, runningBytes: 64 * 1024 * 1024, waiting: 4096 };

export interface FileToImport {
  path: string;
  size: number;
}

/** A file and its place in the import's order (its lines are printed in that order). */
export interface NumberedFile extends FileToImport {
  index: number;
}

/**
 * Paths stat'ed at once: one at a time, the stats of a directory of 10,000 reports took 0.25 s of
 * waiting on the thread pool before the first was read.
 */
const statsAtOnce = 64;

/** Files named on the command line, and every file below a named directory, in name order. */
export async function expandPaths(paths: string[]): Promise<FileToImport[]> {
  const files: FileToImport[] = [];
  for (let start = 0; start < paths.length; start += statsAtOnce) {
    const slice = paths.slice(start, start + statsAtOnce);
    const infos = await Promise.all(slice.map((path) => stat(path).catch(() => null)));
    for (const [index, path] of slice.entries()) {
      const info = infos[index];
      if (!info) throw new CliError(`No such file or directory: ${path}`);
      if (info.isDirectory()) {
        const entries = await readdir(path, { withFileTypes: true });
        files.push(...(await expandPaths(entries.map((entry) => join(path, entry.name)).sort())));
      } else if (info.isFile()) {
        files.push({ path, size: info.size });
      }
    }
  }
  return files;
}

/** Loaded by the command when it runs: `--help` and other commands never pay for the parsers. */
type Intake = typeof import("@dmarc-ledger/intake");

/** Files up to this size are read once, whole: the mbox check and the input from the same bytes. */
const readWholeMaxBytes = 1024 * 1024;

/**
 * Files up to this size are read on this thread, at once (readFileSync): a few KiB from the page
 * cache take about 7 µs so, where fs/promises' open, fstat, read and close through the thread
 * pool took 130 µs of this thread's CPU and more of waiting (10,000 files: 64 ms against 1.3 s of
 * CPU one at a time, 0.5 s sixteen ahead). Larger files are read through the thread pool.
 */
const readAtOnceMaxBytes = 64 * 1024;

/** A file's inputs: the file itself, or each message of an mbox file (recognised by content). */
async function* inputsOf(
  file: FileToImport,
  { bytesInput, fileInput, fileLooksLikeMbox, looksLikeMbox, splitMbox }: Intake,
): AsyncGenerator<{ name: string; source: string; input: InputBytes; bytes: number }> {
  const { path } = file;
  const single = (input: InputBytes, bytes: number) => ({
    name: path,
    source: `import:${basename(path)}`,
    input,
    bytes,
  });
  // The usual report file is a few KiB: one read instead of an open for the mbox check, two
  // stats and a read (the import of many small reports spent a quarter of its time in them).
  if (file.size <= readWholeMaxBytes) {
    const bytes = file.size <= readAtOnceMaxBytes ? readFileSync(path) : await readFile(path);
    if (!looksLikeMbox(bytes)) {
      yield single(bytesInput(bytes), bytes.byteLength);
      return;
    }
    yield* mboxMessages(path, splitMbox(singleChunk(bytes)), bytesInput);
    return;
  }
  if (await fileLooksLikeMbox(path)) {
    yield* mboxMessages(path, splitMbox(createReadStream(path)), bytesInput);
    return;
  }
  yield single(fileInput(path), (await stat(path)).size);
}

async function* singleChunk(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}

async function* mboxMessages(
  path: string,
  messages: AsyncIterable<{ index: number; bytes: Buffer }>,
  bytesInput: Intake["bytesInput"],
): AsyncGenerator<{ name: string; source: string; input: InputBytes; bytes: number }> {
  for await (const message of messages) {
    yield {
      name: `${path}#${message.index}`,
      source: `import:${basename(path)}#${message.index}`,
      input: bytesInput(message.bytes),
      bytes: message.bytes.byteLength,
    };
  }
}

/**
 * Starts the parse workers of an import thread (`parseThreads` of them, none for 0), at once when
 * `warm` (some file is too large to parse where it is read), else when an input first needs one.
 * A worker that fails is reported through `warn`, and its inputs are parsed on the thread.
 * Returns what stops the reports.
 */
export async function startImportParseWorkers(
  parseThreads: number,
  warm: boolean,
  warn: (text: string) => void,
): Promise<() => void> {
  const { startParseWorkers } = await import("@dmarc-ledger/intake");
  return startParseWorkers(
    parseThreads,
    (reason) => warn(`warning: ${reason}; inputs are parsed on this thread`),
    {
      warm,
    },
  );
}

/** One received input of file `file`; `fileBytes`: how far into the file it reaches. */
export interface ImportedInput {
  file: number;
  name: string;
  items: IngestedItem[];
  fileBytes: number;
}

/** Where storeFiles reports: each input once received (in order), each file once all its inputs are. */
export interface StoredFilesReport {
  input(input: ImportedInput): void;
  /** File `file` had `inputs` inputs, all of them passed to input() before or after this call. */
  fileRead(file: number, inputs: number): void;
}

/**
 * Receives every input of `files` through the intake (as every channel does: archived, parsed,
 * stored, acknowledged only once durable), many at once, and reports each in the order read.
 * The import command runs it on its own thread, or on each of its import threads with the files
 * handed out among them (import-threads.ts). Once `signal` aborts, it reads no further file.
 */
export async function storeFiles(
  runtime: Runtime,
  env: NodeJS.ProcessEnv,
  files: AsyncIterable<NumberedFile> | Iterable<NumberedFile>,
  report: StoredFilesReport,
  parseThreads?: number,
  signal?: AbortSignal,
): Promise<void> {
  const intake = await import("@dmarc-ledger/intake");
  const { intakeLimits, intakeSettingsFromEnv, receiveInput } = intake;
  const { runtimeDataKeys } = await import("@dmarc-ledger/runtime");
  const settings = intakeSettingsFromEnv(env);
  // A failure report is sealed under the key of its domain's tenant, read from the domains'
  // table: current as of every domain added, however recently.
  await catchUpTenantTables(runtime);
  const deps: IntakeDeps = {
    store: runtime.store,
    db: runtime.db,
    ...intakeLimits(settings),
    ...(parseThreads !== undefined ? { parseThreads } : {}),
    dataKeys: await runtimeDataKeys(runtime, env),
  };
  // Inputs received at once, reported in order: one input's parsing overlaps the database's work
  // on the others.
  const window = new OrderedWindow<ReceivedInput, Omit<ImportedInput, "items">>(
    importWindow,
    async (received, meta) => {
      const { items } = await received;
      report.input({ ...meta, items });
    },
  );
  try {
    for await (const file of files) {
      // The service stops: the inputs begun are stored (the window drains), no further file is read.
      if (signal?.aborted) break;
      let fileBytes = 0;
      let inputs = 0;
      for await (const { name, source, input, bytes } of inputsOf(file, intake)) {
        fileBytes += bytes;
        inputs++;
        await window.add(bytes, { file: file.index, name, fileBytes: Math.min(fileBytes, file.size) }, () =>
          receiveInput(deps, input, {
            channel: "import",
            source,
            metadata: { causedBy: "process:cli" },
          }),
        );
      }
      report.fileRead(file.index, inputs);
    }
    await window.drain();
  } finally {
    // The runtime closes after this: nothing may still be writing.
    await window.settle();
  }
}
