import type { Command } from "commander";
import { CliError, type CliIO } from "../io.js";
import { withBulkRuntime } from "../with-runtime.js";

export function registerReplayCommand(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  program
    .command("replay")
    .description("rebuild read models from the event store beside the live ones, then swap them in")
    .option("--projection <name>", "rebuild only this projection (an unknown name lists them)")
    .action(async (options: { projection?: string }) => {
      const [{ allProjections }, { rebuildBeside }] = await Promise.all([
        import("@dmarc-ledger/runtime/projections"),
        import("@dmarc-ledger/projection-engine"),
      ]);
      const selected = options.projection
        ? allProjections.filter((projection) => projection.name === options.projection)
        : allProjections;
      if (selected.length === 0) {
        throw new CliError(
          `No projection named "${options.projection}"; one of: ${allProjections.map((projection) => projection.name).join(", ")}.`,
        );
      }
      // The total is unknown until the end (the store keeps no count), so the bar shows events and rate.
      const bar = process.stderr.isTTY
        ? new (await import("cli-progress")).SingleBar({
            format: "replaying | {value} events | {speed} events/s",
            clearOnComplete: true,
          })
        : null;
      const started = Date.now();
      let events = 0;
      bar?.start(0, 0, { speed: 0 });
      await withBulkRuntime(env, (runtime) =>
        rebuildBeside({
          store: runtime.store,
          db: runtime.db,
          projections: selected,
          concurrentSessions: runtime.database.concurrentSessions,
          onProgress: (count) => {
            events = count;
            bar?.update(count, { speed: Math.round(count / Math.max(0.001, (Date.now() - started) / 1000)) });
          },
        }),
      ).finally(() => bar?.stop());
      io.out(
        `Rebuilt ${selected.map((projection) => projection.name).join(", ")} from ${events} events in ${((Date.now() - started) / 1000).toFixed(1)} s.`,
      );
    });
}
