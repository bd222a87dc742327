import { resolve } from "node:path";
import type { Command } from "commander";
import { attachedRuntime, serviceStopping } from "../control/attached-runtime.js";
import { CliError, type CliIO } from "../io.js";
import { withBulkRuntime } from "../with-runtime.js";
import { expandPaths, type NumberedFile, startImportParseWorkers, storeFiles } from "./import-files.js";
import { InFileOrder } from "./import-order.js";
import { describeItem, ImportTally } from "./import-summary.js";
import { filesForThreads, importThreadCount, storeOnThreads } from "./import-threads.js";
import { catchUpReadModels, notWaitedLine, withNoWaitOption } from "./wait-for-read-models.js";

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

function threadCountOption(value: string): number {
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1 || count > 64)
    throw new CliError(`--threads must be a whole number from 1 to 64, not "${value}"`);
  return count;
}

export function registerImportCommand(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  const command = program
    .command("import")
    .description(
      "import report files, directories (recursively) and mbox files: XML, gzip, zip, mail; aggregate and failure reports",
    )
    .argument("<paths...>", "files, directories or mbox files")
    .option(
      "--threads <n>",
      `threads storing the files, each with its own database connections (PostgreSQL only; default: one per core, up to 4, from ${filesForThreads.toLocaleString("en")} files)`,
      threadCountOption,
    );
  withNoWaitOption(command).action(async (paths: string[], options: { wait: boolean; threads?: number }) => {
    const { hereLimits, intakeSettingsFromEnv } = await import("@dmarc-ledger/intake");
    const settings = intakeSettingsFromEnv(env);
    const files = await expandPaths(paths.map((path) => resolve(io.cwd ?? process.cwd(), path)));
    const threads = importThreadCount(options.threads, files.length, {
      postgres: Boolean(env.DATABASE_URL),
      inService: attachedRuntime.getStore() !== undefined,
    });
    // Parse workers load the parser while the database opens; not before an input needs them
    // when every file is small enough to be parsed where it is read (the usual bulk import of
    // single reports).
    const warm = files.some((file) => file.size > hereLimits.inputBytes);
    // Handed to the running service: its stop ends the import early (what was begun is stored).
    const stopping = serviceStopping.getStore();
    const tally = new ImportTally();
    const totalBytes = files.reduce((sum, file) => sum + file.size, 0);
    const bar = await progressBar(io, totalBytes);
    const inOrder = new InFileOrder(
      files.map((file) => file.size),
      ({ name, items }, progress) => {
        tally.add(name, items);
        if (bar) {
          bar.update(progress, {
            inputs: tally.inputs,
            stored: tally.stored,
            duplicates: tally.duplicates,
            rejected: tally.rejected.length,
          });
        } else {
          for (const item of items) (item.kind === "rejected" ? io.err : io.out)(describeItem(name, item));
        }
      },
    );
    const warn = (text: string) => io.err(text);
    // The parse workers' setting is shared among the threads (0: none, every input parsed where read).
    const parseThreads =
      threads === 1 || settings.parseThreads === 0
        ? settings.parseThreads
        : Math.max(1, Math.floor(settings.parseThreads / threads));
    const stopTellingWorkerFailures = await startImportParseWorkers(parseThreads, warm, warn);
    try {
      await withBulkRuntime(env, async (runtime) => {
        const storeHere = (handed: Iterable<NumberedFile>) =>
          storeFiles(runtime, env, handed, inOrder, parseThreads, stopping);
        // With threads, this thread stores too, beside threads - 1 worker threads: it has loaded
        // the intake already, and would otherwise wait (a thread's start costs about 0.35 s of CPU).
        if (threads > 1)
          await storeOnThreads(
            files,
            threads - 1,
            { env: { ...env }, parseThreads, warm },
            inOrder,
            warn,
            storeHere,
          );
        else await storeHere(files.map((file, index) => ({ ...file, index })));
        if (options.wait && !stopping?.aborted) await catchUpReadModels(runtime, stopping);
      });
    } finally {
      stopTellingWorkerFailures();
      bar?.update(Math.max(totalBytes, 1));
      bar?.stop();
    }
    for (const line of tally.summary()) io.out(line);
    if (stopping?.aborted) {
      throw new CliError(
        `the service is stopping: the import ended after ${tally.inputs.toLocaleString("en")} inputs (of ${files.length.toLocaleString("en")} files). Run it again once the service runs: what it stored counts as duplicates then.`,
      );
    }
    if (!options.wait) io.out(notWaitedLine);
    // 2: the command worked, but some input was rejected (and kept with its reason).
    if (tally.rejected.length > 0) throw new CliError("", 2);
  });
}
