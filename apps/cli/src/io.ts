/** Where a command writes: the terminal in main.ts, a buffer in tests. */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  /** True when stdout is a terminal: progress bars are drawn only then. */
  isTerminal?: boolean;
  /** The caller's working directory, for relative paths (a command run by the service for the CLI). */
  cwd?: string;
}

/**
 * Writes to `stream` until its reader goes away (`dmarc-ledger import DIR | head -8`): then the
 * rest is dropped and the command runs to its end, instead of the write's EPIPE ending the process
 * in the middle of its work with a stack trace.
 */
function untilReaderLeaves(stream: NodeJS.WriteStream): (text: string) => void {
  let readerLeft = false;
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE" && !readerLeft) throw error;
    readerLeft = true;
  });
  return (text) => {
    if (!readerLeft) stream.write(`${text}\n`);
  };
}

export const consoleIO: CliIO = {
  out: untilReaderLeaves(process.stdout),
  err: untilReaderLeaves(process.stderr),
  isTerminal: process.stdout.isTTY === true,
};

/** A failure meant for the person at the terminal: printed without a stack, exit status 1. */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/**
 * What `--json` prints: one JSON document (a listing is one array), indented, so that `jq` and
 * JSON.parse read the whole output at once.
 */
export function jsonDocument(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
