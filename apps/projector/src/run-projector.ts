import { type StopProgress, unwatchedStop } from "@dmarc-ledger/process";
import { type RunningProjector, startLeasedProjector } from "@dmarc-ledger/projection-engine";
import type { Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import type { Logger } from "pino";
import { claimExistingDomains } from "./claim-existing-domains.js";
import { rankingMaintenanceFromEnv, startRankingMaintenance } from "./ranking-maintenance.js";

/** A projector whose stop can say which of its parts it is waiting for. */
export interface RunningProjectorApp extends RunningProjector {
  stop(progress?: StopProgress): Promise<void>;
}

/**
 * Runs its share of the projections (those whose lease it holds: all of them when it is the only
 * projector) on the runtime's event store until stopped, and beside them the upkeep
 * of the by-source rankings. Stopping waits for the batch being applied.
 */
export function runProjector(
  runtime: Pick<Runtime, "store" | "db">,
  logger: Logger,
  upkeep: ReturnType<typeof rankingMaintenanceFromEnv> = rankingMaintenanceFromEnv(process.env),
): RunningProjectorApp {
  // Any number of projector processes share the projections, each run by one at a time.
  const projector = startLeasedProjector({
    store: runtime.store,
    db: runtime.db,
    projections: allProjections,
    onError: (error) => logger.error({ err: error }, "projection batch failed; retrying from the checkpoint"),
    onOwnership: (projections) => logger.info({ projections }, "running these projections"),
  });
  const rankings = startRankingMaintenance({ db: runtime.db, logger, ...upkeep });
  let stopping = false;
  // Once the read models have caught up with what was stored before this start.
  const claims = (async () => {
    const head = await runtime.store.headPosition();
    while (head !== null && !stopping && !(await projector.waitFor(head, 1000))) {}
    if (!stopping) await claimExistingDomains(runtime, logger);
  })().catch((error) => logger.error({ err: error }, "claiming the trees of existing domains failed"));
  return {
    waitFor: projector.waitFor,
    async stop(progress = unwatchedStop) {
      stopping = true;
      await progress.part("claiming the trees of existing domains", () => claims);
      await progress.part("the ranking upkeep", () => rankings.stop());
      await progress.part("the projections", () => projector.stop());
    },
  };
}
