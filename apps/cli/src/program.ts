import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { registerAlertCommands } from "./commands/alerts.js";
import { registerDemoCommand } from "./commands/demo.js";
import { registerDomainCommands } from "./commands/domain.js";
import { registerHistoryCommand } from "./commands/history.js";
import { registerImportCommand } from "./commands/import.js";
import { registerReplayCommand } from "./commands/replay.js";
import { registerReprocessCommand } from "./commands/reprocess.js";
import { registerSendersCommand } from "./commands/senders.js";
import { registerSpfCommands } from "./commands/spf.js";
import { registerStartCommand } from "./commands/start.js";
import { registerTenantCommands } from "./commands/tenant.js";
import { registerTlsCommand } from "./commands/tls.js";
import { registerUserCommands } from "./commands/user.js";
import { runInRunningService } from "./control/control-client.js";
import { CliError, type CliIO } from "./io.js";

/**
 * The `dmarc-ledger` command. Environment: DMARC_LEDGER_DATA_DIR (embedded data, default ./data),
 * DATABASE_URL (PostgreSQL instead), EVENTSTORE_URL (KurrentDB for events), PORT (API port).
 */
export function createProgram(io: CliIO, env: NodeJS.ProcessEnv): Command {
  const program = new Command("dmarc-ledger")
    .description("event-sourced DMARC reporting with Safe SPF")
    .version(cliVersion(), "-V, --version", "print the version")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.out(text.trimEnd()),
      writeErr: (text) => io.err(text.trimEnd()),
    });
  registerTenantCommands(program, io, env);
  registerUserCommands(program, io, env);
  registerDomainCommands(program, io, env);
  registerImportCommand(program, io, env);
  registerReplayCommand(program, io, env);
  registerReprocessCommand(program, io, env);
  registerHistoryCommand(program, io, env);
  registerSendersCommand(program, io, env);
  registerTlsCommand(program, io, env);
  registerStartCommand(program, io, env);
  registerSpfCommands(program, io, env);
  registerAlertCommands(program, io, env);
  registerDemoCommand(program, io, env);
  for (const command of program.commands) applyOutput(command, io);
  return program;
}

function applyOutput(command: Command, io: CliIO): void {
  command.exitOverride().configureOutput({
    writeOut: (text) => io.out(text.trimEnd()),
    writeErr: (text) => io.err(text.trimEnd()),
  });
  for (const sub of command.commands) applyOutput(sub, io);
}

/**
 * Runs one command line; returns the exit status instead of exiting, so tests can call it. In
 * embedded mode a running service holds the data directory: the command is handed to it.
 */
export async function runCli(argv: string[], io: CliIO, env: NodeJS.ProcessEnv): Promise<number> {
  try {
    const handedOver = await runInRunningService(env, argv, io);
    if (handedOver !== null) return handedOver;
  } catch (error) {
    io.err(`error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  return runCliHere(argv, io, env);
}

/** Runs one command line in this process (the service runs the CLI's commands with this). */
export async function runCliHere(argv: string[], io: CliIO, env: NodeJS.ProcessEnv): Promise<number> {
  try {
    await createProgram(io, env).parseAsync(argv, { from: "user" });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof CliError) {
      if (error.message) io.err(`error: ${error.message}`);
      return error.exitCode;
    }
    io.err(`error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

/** The version of this package, read from its package.json beside src/ (and beside dist/). */
function cliVersion(): string {
  const packageJson = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  return String(packageJson.version);
}
