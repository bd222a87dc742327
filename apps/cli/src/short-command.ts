import { existsSync } from "node:fs";
import { embeddedControlSocketPath } from "./control/protocol.js";

/**
 * The commands that open the embedded database for a moment (withRuntime, not withBulkRuntime),
 * as their words on the command line.
 */
const shortDatabaseCommands = [
  ["tenant", "create"],
  ["tenant", "list"],
  ["tenant", "key", "list"],
  ["tenant", "key", "issue"],
  ["tenant", "key", "revoke"],
  ["domain", "add"],
  ["domain", "list"],
  ["domain", "remove"],
  ["history"],
];

/**
 * Whether this command line opens PGlite in this process for one short command. Not on
 * PostgreSQL (DATABASE_URL), not for help, not for a command that opens nothing or moves many
 * rows, and not when the service running on the data directory answers on its control socket
 * (the command is handed to it: runInRunningService).
 */
export function opensPGliteForOneCommand(argv: string[], env: NodeJS.ProcessEnv): boolean {
  if (env.DATABASE_URL) return false;
  if (argv.some((arg) => arg === "-h" || arg === "--help" || arg === "-V" || arg === "--version"))
    return false;
  if (!shortDatabaseCommands.some((words) => words.every((word, index) => argv[index] === word)))
    return false;
  return !existsSync(embeddedControlSocketPath(env));
}

/**
 * For a short command on the embedded database, before its modules load: PGlite's WebAssembly is
 * compiled for one command (see compileWasmForOneCommand), starting now, on V8's compiler
 * threads, while the main thread loads the command's modules (a few tenths of a second).
 */
export async function prepareForOneCommand(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  if (!opensPGliteForOneCommand(argv, env)) return;
  const { compiledPGliteWasm, compileWasmForOneCommand } = await import("@dmarc-ledger/db/pglite-wasm");
  compileWasmForOneCommand();
  // Its errors, if any, come from the open, which waits for it.
  compiledPGliteWasm().catch(() => {});
}
