import { allProjections, type RunningProjector, startProjector } from "@dmarc-ledger/read-models";
import type { Runtime } from "@dmarc-ledger/runtime";
import type { Logger } from "pino";

/** Runs every projection on the runtime's event store until stopped. */
export function runProjector(runtime: Runtime, logger: Logger): RunningProjector {
  return startProjector({
    store: runtime.store,
    db: runtime.db,
    projections: allProjections,
    onError: (error) => logger.error({ err: error }, "projection batch failed; retrying from the checkpoint"),
  });
}
