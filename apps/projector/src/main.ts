// The projector as a process of its own (production layout): `node apps/projector/dist/main.js`
// after `pnpm build`.
import { parseSettings } from "@dmarc-ledger/config";
import { createLogger, exitOnStartFailure, loggingSettings, stopOnSignal } from "@dmarc-ledger/process";
import { openRuntime, runtimeSettings } from "@dmarc-ledger/runtime";
import { resolverFrom, safeSpfSettings, startSafeSpfWorker } from "@dmarc-ledger/safe-spf-service";
import { rankingMaintenanceFrom } from "./ranking-maintenance.js";
import { runProjector } from "./run-projector.js";
import { projectorSettings } from "./settings.js";

const settings = exitOnStartFailure(() =>
  parseSettings(
    { ...runtimeSettings, ...safeSpfSettings, ...projectorSettings, ...loggingSettings },
    process.env,
  ),
);
const logger = createLogger(settings, "projector");
const runtime = await exitOnStartFailure(() => openRuntime(process.env));
const projector = runProjector(runtime, logger, rankingMaintenanceFrom(settings));
// The Safe SPF process runs beside the projector: both follow the event store in the background.
const safeSpf = startSafeSpfWorker({
  store: runtime.store,
  db: runtime.db,
  resolver: resolverFrom(settings),
  ...(settings.SAFE_SPF_ZONE ? { publishZone: settings.SAFE_SPF_ZONE } : {}),
  onError: (error) => logger.error({ err: error }, "Safe SPF process failed; retrying"),
});
logger.info({ data: runtime.description }, "projecting");

stopOnSignal(logger, async () => {
  await safeSpf.stop();
  await projector.stop();
  await runtime.close();
});
