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

/** Where the service running on the embedded data directory of `env` listens for commands. */
export const embeddedControlSocketPath = (env: NodeJS.ProcessEnv) =>
  controlSocketPath(env.DMARC_LEDGER_DATA_DIR || "./data");

/** A request is an argument list: far below this. */
export const maxRequestBytes = 64 * 1024;

export interface ControlRequest {
  argv: string[];
  cwd: string;
}

export type ControlAnswer = { out: string } | { err: string } | { exit: number };
