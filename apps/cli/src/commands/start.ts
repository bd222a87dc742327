import type { Command } from "commander";
import type { CliIO } from "../io.js";

export function registerStartCommand(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  program
    .command("start")
    .description("run the API and the projector in one process (PORT, default 8080)")
    // Loaded when run: the service's settings, logger and listener are no other command's business.
    .action(async () => (await import("./run-start.js")).runStart(io, env));
}
