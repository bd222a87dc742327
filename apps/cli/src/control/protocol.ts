import { join } from "node:path";

/**
 * The CLI beside a running embedded service: `dmarc-ledger start` holds the data directory, so
 * other commands hand their argument list to it over this Unix socket, created in the data
 * directory with mode 0600 (only the directory's owner may connect), and print what it sends back.
 *
 * One request line, `{"argv": [...], "cwd": "...", "caller": {"pid", "user"}}`, then answer lines `{"out": text}`,
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
  /**
   * Who handed the command over, as the CLI says (the socket is the directory owner's alone, so
   * it is that user's word): for the service's log line of each command.
   */
  caller?: { pid: number; user: string };
}

const apiKeyText = /dlk_[a-z]+_[A-Za-z0-9_-]+/g;
const secretOption = /^--?[\w-]*(pass|secret|token|credential)[\w-]*/i;

/**
 * A command line as the service's log may show it: API keys (`dlk_…`) cut to their prefix, and
 * the value of any option named like a password, secret or token replaced.
 */
export function loggableArgv(argv: readonly string[]): string[] {
  return argv.map((arg, index) => {
    const previous = argv[index - 1];
    if (previous !== undefined && secretOption.test(previous) && !previous.includes("=")) return "[redacted]";
    const option = secretOption.exec(arg);
    if (option && arg.includes("=")) return `${arg.slice(0, arg.indexOf("="))}=[redacted]`;
    return redactApiKeys(arg);
  });
}

/** `text` with every API key in it cut to the part the key listings show. */
export function redactApiKeys(text: string): string {
  return text.replace(apiKeyText, (key) => `${key.slice(0, key.indexOf("_", 4) + 7)}…[redacted]`);
}

export type ControlAnswer = { out: string } | { err: string } | { exit: number };

/** What a second `start` on the data directory of a running service is told. */
export const alreadyRunningMessage = (dataDir: string) =>
  `dmarc-ledger is already running on the data directory ${dataDir} (it answers on its control socket): stop it first, or start this one with another DMARC_LEDGER_DATA_DIR (or DATABASE_URL).`;
