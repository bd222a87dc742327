import { join } from "node:path";

/**
 * The CLI beside a running embedded service: `dmarc-ledger start` holds the data directory, so
 * other commands hand their argument list to it over this Unix socket, created in the data
 * directory with mode 0600 (only the directory's owner may connect), and print what it sends back.
 *
 * One request line, `{"argv": [...], "cwd": "..."}`, then answer lines `{"out": text}`,
 * `{"err": text}`, and last `{"exit": status}`.
 */
export const controlSocketName = "control.sock";

export const controlSocketPath = (dataDir: string) => join(dataDir, controlSocketName);

/** The embedded data directory `env` selects (DMARC_LEDGER_DATA_DIR, ./data by default). */
export const embeddedDataDir = (env: NodeJS.ProcessEnv) => env.DMARC_LEDGER_DATA_DIR || "./data";

/** Where the service running on the embedded data directory of `env` listens for commands. */
export const embeddedControlSocketPath = (env: NodeJS.ProcessEnv) => controlSocketPath(embeddedDataDir(env));

/** A request is an argument list: far below this. */
export const maxRequestBytes = 64 * 1024;

export interface ControlRequest {
  argv: string[];
  cwd: string;
}

export type ControlAnswer = { out: string } | { err: string } | { exit: number };

/** What a second `start` on the data directory of a running service is told. */
export const alreadyRunningMessage = (dataDir: string) =>
  `dmarc-ledger is already running on the data directory ${dataDir} (it answers on its control socket): stop it first, or start this one with another DMARC_LEDGER_DATA_DIR (or DATABASE_URL).`;
