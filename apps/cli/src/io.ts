/** Where a command writes: the terminal in main.ts, a buffer in tests. */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  /** True when stdout is a terminal: progress bars are drawn only then. */
  isTerminal?: boolean;
  /** The caller's working directory, for relative paths (a command run by the service for the CLI). */
  cwd?: string;
}

export const consoleIO: CliIO = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
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
