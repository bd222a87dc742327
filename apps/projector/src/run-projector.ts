import { allProjections, type RunningProjector, startProjector } from "@dmarc-ledger/read-models";
import type { Runtime } from "@dmarc-ledger/runtime";
import type { Logger } from "pino";
import { rankingMaintenanceFromEnv, startRankingMaintenance } from "./ranking-maintenance.js";

/**
 * Runs every projection on the runtime's event store until stopped, and beside them the upkeep
 * of the by-source rankings (settings from `env`).
 */
export function runProjector(
  runtime: Runtime,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
): RunningProjector {
  const projector = startProjector({
    store: runtime.store,
    db: runtime.db,
    projections: allProjections,
    onError: (error) => logger.error({ err: error }, "projection batch failed; retrying from the checkpoint"),
  });
  const rankings = startRankingMaintenance({ db: runtime.db, logger, ...rankingMaintenanceFromEnv(env) });
  return {
    waitFor: projector.waitFor,
    async stop() {
      await rankings.stop();
      await projector.stop();
    },
  };
}
