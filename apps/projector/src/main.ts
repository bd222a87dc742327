// The projector as a process of its own (production layout): `node apps/projector/dist/main.js`
// after `pnpm build`.
import { parseSettings } from "@dmarc-ledger/config";
import {
  connectionLost,
  createLogger,
  exitOnStartFailure,
  loggingSettings,
  metricsSettings,
  stopOnSignal,
  stopSettings,
} from "@dmarc-ledger/process";
import { openRuntime, runtimeSettings } from "@dmarc-ledger/runtime";
import { resolverFrom, safeSpfSettings, startSafeSpfWorker } from "@dmarc-ledger/safe-spf-service";
import { serveProjectorMetrics } from "./projector-metrics.js";
import { rankingMaintenanceFrom } from "./ranking-maintenance.js";
import { runProjector } from "./run-projector.js";
import { projectorSettings } from "./settings.js";

const settings = exitOnStartFailure(() =>
  parseSettings(
    {
      ...runtimeSettings,
      ...safeSpfSettings,
      ...projectorSettings,
      ...loggingSettings,
      ...stopSettings,
      ...metricsSettings,
    },
    process.env,
  ),
);
const logger = createLogger(settings, "projector");
const runtime = await exitOnStartFailure(() =>
  openRuntime(process.env, { onConnectionError: connectionLost(logger), service: true }),
);
// Off unless METRICS_PORT is set: the process's own metrics and the projections' lag.
const metrics = await exitOnStartFailure(() => serveProjectorMetrics(settings, runtime, logger));
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

stopOnSignal(
  logger,
  async () => {
    await safeSpf.stop();
    await projector.stop();
    await metrics?.stop();
    await runtime.close();
  },
  { timeoutMs: settings.STOP_TIMEOUT_MS, cancelQueries: () => runtime.database.cancelQueries() },
);
