import { allProjections, catchUp, resetProjections } from "@dmarc-ledger/read-models";
import type { Command } from "commander";
import { CliError, type CliIO } from "../io.js";
import { withRuntime } from "../with-runtime.js";

export function registerReplayCommand(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  program
    .command("replay")
    .description("rebuild read models from the event store")
    .option(
      "--projection <name>",
      `one of: ${allProjections.map((projection) => projection.name).join(", ")}`,
    )
    .action(async (options: { projection?: string }) => {
      const selected = options.projection
        ? allProjections.filter((projection) => projection.name === options.projection)
        : allProjections;
      if (selected.length === 0) throw new CliError(`No projection named "${options.projection}".`);
      await withRuntime(env, async (runtime) => {
        await resetProjections(runtime.db, selected);
        await catchUp({ store: runtime.store, db: runtime.db, projections: selected });
      });
      io.out(`Rebuilt ${selected.map((projection) => projection.name).join(", ")}.`);
    });
}
