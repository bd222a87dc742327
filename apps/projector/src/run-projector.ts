import { allProjections, type RunningProjector, startProjector } from "@dmarc-ledger/read-models";
import type { Runtime } from "@dmarc-ledger/runtime";
import type { Logger } from "pino";
import { rankingMaintenanceFromEnv, startRankingMaintenance } from "./ranking-maintenance.js";

/**
 * Runs every projection on the runtime's event store until stopped, and beside them the upkeep
 * of the by-source rankings. Stopping waits for the batch being applied.
 */
export function runProjector(
  runtime: Pick<Runtime, "store" | "db">,
  logger: Logger,
  upkeep: ReturnType<typeof rankingMaintenanceFromEnv> = rankingMaintenanceFromEnv(process.env),
): RunningProjector {
  const projector = startProjector({
    store: runtime.store,
    db: runtime.db,
    projections: allProjections,
    onError: (error) => logger.error({ err: error }, "projection batch failed; retrying from the checkpoint"),
  });
  const rankings = startRankingMaintenance({ db: runtime.db, logger, ...upkeep });
  return {
    waitFor: projector.waitFor,
    async stop() {
      await rankings.stop();
      await projector.stop();
    },
  };
}
