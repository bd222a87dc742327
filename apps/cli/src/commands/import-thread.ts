/**
 * An import thread (import-threads.ts): asks the command for files, stores them as the command
 * itself would (storeFiles, with a runtime of its own), and tells it each input and file.
 */
import { parentPort, workerData } from "node:worker_threads";
import { CliError } from "../io.js";
import { withBulkRuntime } from "../with-runtime.js";
import { type NumberedFile, storeFiles } from "./import-files.js";
import type { FilesForThread, FromImportThread, ImportThreadData } from "./import-threads.js";

const port = parentPort!;
const data = workerData as ImportThreadData;
const tell = (message: FromImportThread) => port.postMessage(message);

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
  const { startParseWorkers } = await import("@dmarc-ledger/intake");
  const stopTelling = startParseWorkers(
    data.parseThreads,
    (reason) => tell({ kind: "warning", text: `warning: ${reason}; inputs are parsed on this thread` }),
    { warm: data.warm },
  );
  try {
    await withBulkRuntime(data.env, (runtime) =>
      storeFiles(
        runtime,
        data.env,
        handedOut(),
        {
          input: (input) => tell({ kind: "input", input }),
          fileRead: (file, inputs) => tell({ kind: "fileRead", file, inputs }),
        },
        data.parseThreads,
      ),
    );
  } finally {
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
