import { createReadStream, readFileSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import type { InputBytes, IntakeDeps, ReceivedInput } from "@dmarc-ledger/intake";
import type { Command } from "commander";
import { CliError, type CliIO } from "../io.js";
import { catchUpTenantTables } from "../tenant-ref.js";
import { withBulkRuntime } from "../with-runtime.js";
import { describeItem, ImportTally } from "./import-summary.js";
import { OrderedWindow } from "./ordered-window.js";
import { catchUpReadModels, notWaitedLine, withNoWaitOption } from "./wait-for-read-models.js";

/**
 * Inputs being received at once, and their bytes (each holds its bytes and reports in memory, the
 * reports within the intake's HoldBudget). Enough that inputs share commits (group commit) while
 * the parse workers work on the next: on 2 cores, 4 at once imported the corpus mix at 13 ms a
 * mail, 8 at 10.5 ms, 16 at 9.3 ms. A received input waits for those before it to be reported
 * without holding a place (see OrderedWindow): a window that waited for its oldest input stalled
 * behind each large report, and the corpus mix went from 58% to about 68% of parse-only. At 32
 * (and groups of up to 32) 2,000 reports of 20 rows made 232 commits instead of 313 and took
 * about 0.2 s less CPU (issue 27). Later, 10,000 such reports were stored in 7.2 s at 32, 6.45 s
 * at 64 (groups of up to 64) and 5.9 to 6.0 s at 128 (groups of up to 64).
 */
const importWindow = { running: 128, runningBytes: 64 * 1024 * 1024, waiting: 4096 };

interface FileToImport {
  path: string;
  size: number;
}

/**
 * Paths stat'ed at once: one at a time, the stats of a directory of 10,000 reports took 0.25 s of
 * waiting on the thread pool before the first was read.
 */
const statsAtOnce = 64;

/** Files named on the command line, and every file below a named directory, in name order. */
async function expandPaths(paths: string[]): Promise<FileToImport[]> {
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

/** A progress bar on a terminal; nothing otherwise (logs and pipes get one line per input). */
async function progressBar(io: CliIO, totalBytes: number) {
  if (!io.isTerminal) return null;
  const { default: cliProgress } = await import("cli-progress");
  const bar = new cliProgress.SingleBar(
    {
      format:
        "importing {bar} {percentage}% | {inputs} inputs | {stored} stored, {duplicates} duplicates, {rejected} rejected",
      hideCursor: true,
      stream: process.stdout,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(Math.max(totalBytes, 1), 0, { inputs: 0, stored: 0, duplicates: 0, rejected: 0 });
  return bar;
}

export function registerImportCommand(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  const command = program
    .command("import")
    .description(
      "import report files, directories (recursively) and mbox files: XML, gzip, zip, mail; aggregate and failure reports",
    )
    .argument("<paths...>", "files, directories or mbox files");
  withNoWaitOption(command).action(async (paths: string[], options: { wait: boolean }) => {
    const intake = await import("@dmarc-ledger/intake");
    const { hereLimits, intakeLimits, intakeSettingsFromEnv, receiveInput, startParseWorkers } = intake;
    const settings = intakeSettingsFromEnv(env);
    const files = await expandPaths(paths.map((path) => resolve(io.cwd ?? process.cwd(), path)));
    const tally = new ImportTally();
    // They load the parser while the database opens; not before an input needs them when every
    // file is small enough to be parsed on this thread (the usual bulk import of single reports).
    const stopTellingWorkerFailures = startParseWorkers(
      settings.parseThreads,
      (reason) => io.err(`warning: ${reason}; inputs are parsed on this thread`),
      { warm: files.some((file) => file.size > hereLimits.inputBytes) },
    );
    try {
      await withBulkRuntime(env, async (runtime) => {
        const { runtimeDataKeys } = await import("@dmarc-ledger/runtime");
        // A failure report is sealed under the key of its domain's tenant, read from the domains'
        // table: current as of every domain added, however recently.
        await catchUpTenantTables(runtime);
        const deps: IntakeDeps = {
          store: runtime.store,
          db: runtime.db,
          ...intakeLimits(settings),
          dataKeys: await runtimeDataKeys(runtime, env),
        };
        const bar = await progressBar(
          io,
          files.reduce((sum, file) => sum + file.size, 0),
        );
        let done = 0;
        // Inputs received at once, reported in order: one input's parsing overlaps the
        // database's work on the others.
        const window = new OrderedWindow<ReceivedInput, { name: string; progress: number }>(
          importWindow,
          async (received, { name, progress }) => {
            const { items } = await received;
            tally.add(name, items);
            if (bar) {
              bar.update(progress, {
                inputs: tally.inputs,
                stored: tally.stored,
                duplicates: tally.duplicates,
                rejected: tally.rejected.length,
              });
            } else {
              for (const item of items)
                (item.kind === "rejected" ? io.err : io.out)(describeItem(name, item));
            }
          },
        );
        try {
          for (const file of files) {
            let fileBytes = 0;
            for await (const { name, source, input, bytes } of inputsOf(file, intake)) {
              fileBytes += bytes;
              const progress = done + Math.min(fileBytes, file.size);
              await window.add(bytes, { name, progress }, () =>
                receiveInput(deps, input, {
                  channel: "import",
                  source,
                  metadata: { causedBy: "process:cli" },
                }),
              );
            }
            done += file.size;
          }
          await window.drain();
        } finally {
          // The runtime closes after this: nothing may still be writing.
          await window.settle();
          bar?.update(Math.max(done, 1));
          bar?.stop();
        }
        if (options.wait) await catchUpReadModels(runtime);
      });
    } finally {
      stopTellingWorkerFailures();
    }
    for (const line of tally.summary()) io.out(line);
    if (!options.wait) io.out(notWaitedLine);
    // 2: the command worked, but some input was rejected (and kept with its reason).
    if (tally.rejected.length > 0) throw new CliError("", 2);
  });
}
