/**
 * An import thread (import-threads.ts): asks the command for files, stores them as the command
 * itself would (storeFiles, with a runtime of its own), and tells it each input and file.
 */
import { parentPort, workerData } from "node:worker_threads";
import { CliError } from "../io.js";
import { withBulkRuntime } from "../with-runtime.js";
import { type NumberedFile, startImportParseWorkers, storeFiles } from "./import-files.js";
import type { FilesForThread, FromImportThread, ImportThreadData } from "./import-threads.js";

const port = parentPort!;
const data = workerData as ImportThreadData;
const tell = (message: FromImportThread) => port.postMessage(message);

/**
 * Inputs received and files read, told in one message per this many inputs or this long: a
 * message each cost 25 µs of this thread's CPU (0.25 s a thread for 10,000 reports), the
 * structured clone's fixed part and the wake-up of the command's thread.
 */
const tellEvery = { inputs: 64, ms: 50 };
let untold: Extract<FromImportThread, { kind: "stored" }> = { kind: "stored", inputs: [], filesRead: [] };
let tellTimer: NodeJS.Timeout | null = null;

function tellStored(): void {
  if (tellTimer) clearTimeout(tellTimer);
  tellTimer = null;
  if (untold.inputs.length === 0 && untold.filesRead.length === 0) return;
  tell(untold);
  untold = { kind: "stored", inputs: [], filesRead: [] };
}

function toldSoon(): void {
  if (untold.inputs.length >= tellEvery.inputs) tellStored();
  else tellTimer ??= setTimeout(tellStored, tellEvery.ms);
}

const answers: ((files: NumberedFile[]) => void)[] = [];
port.on("message", (message: FilesForThread) => answers.shift()?.(message.files));

async function* handedOut(): AsyncGenerator<NumberedFile> {
  for (;;) {
    const files = await new Promise<NumberedFile[]>((resolve) => {
      answers.push(resolve);
      tell({ kind: "next" });
    });
    if (files.length === 0) return;
    yield* files;
  }
}

try {
  const stopTelling = await startImportParseWorkers(data.parseThreads, data.warm, (text) =>
    tell({ kind: "warning", text }),
  );
  try {
    await withBulkRuntime(data.env, (runtime) =>
      storeFiles(
        runtime,
        data.env,
        handedOut(),
        {
          input: (input) => {
            untold.inputs.push(input);
            toldSoon();
          },
          fileRead: (file, inputs) => {
            untold.filesRead.push([file, inputs]);
            toldSoon();
          },
        },
        data.parseThreads,
      ),
    );
  } finally {
    // What was stored reaches the command before any failure does.
    tellStored();
    stopTelling();
  }
} catch (error) {
  tell({
    kind: "failed",
    message: error instanceof Error ? error.message : String(error),
    exitCode: error instanceof CliError ? error.exitCode : null,
  });
}
// Messages already posted still reach the command; the port no longer keeps the thread alive.
port.unref();
