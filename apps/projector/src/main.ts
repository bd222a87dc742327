// The projector as a process of its own (production layout): `node apps/projector/dist/main.js`
// after `pnpm build`.
import { alertsSettings } from "@dmarc-ledger/alerts/settings";
import { parseSettings } from "@dmarc-ledger/config";
import { eventBrokerSettingsFromEnv } from "@dmarc-ledger/event-feed/settings";
import { domainStatusChecker, onboardingSettingsFromEnv } from "@dmarc-ledger/onboarding";
import {
  connectionLost,
  createLogger,
  exitOnStartFailure,
  loggingSettings,
  metricsSettings,
  stopOnSignal,
  stopSettings,
} from "@dmarc-ledger/process";
import { openRuntime, runtimeDataKeys, runtimeSettings } from "@dmarc-ledger/runtime";
import { safeSpfSettings } from "@dmarc-ledger/safe-spf-service";
import { serveProjectorMetrics } from "./projector-metrics.js";
import { projectorSettings } from "./settings.js";
import { startProjectorApp } from "./start-projector-app.js";

const settings = exitOnStartFailure(() =>
  parseSettings(
    {
      ...runtimeSettings,
      ...safeSpfSettings,
      ...projectorSettings,
      ...alertsSettings,
      ...loggingSettings,
      ...stopSettings,
      ...metricsSettings,
    },
    process.env,
  ),
);
const onboarding = exitOnStartFailure(() => onboardingSettingsFromEnv(process.env));
const eventBroker = exitOnStartFailure(() => eventBrokerSettingsFromEnv(process.env));
const logger = createLogger(settings, "projector");
const runtime = await exitOnStartFailure(() =>
  openRuntime(process.env, { onConnectionError: connectionLost(logger), service: true }),
);
// Off unless METRICS_PORT is set: the process's own metrics and the projections' lag.
const metrics = await exitOnStartFailure(() => serveProjectorMetrics(settings, runtime, logger));
// The alerts open the addresses of the people they mail: a wrong MASTER_KEY is refused here.
const dataKeys = await exitOnStartFailure(() => runtimeDataKeys(runtime));
const projector = startProjectorApp({
  dataKeys,
  runtime,
  logger,
  settings,
  checkDomainStatus: domainStatusChecker(onboarding),
  // The events' CloudEvents source is the API root the API processes answer under.
  eventBroker: eventBroker && {
    settings: eventBroker,
    source: process.env.PUBLIC_BASE_URL || "http://localhost:8080/api/",
  },
});
logger.info({ data: runtime.description }, "projecting");

stopOnSignal(
  logger,
  async (progress) => {
    await progress.part("the projector app", () => projector.stop(progress));
    await progress.part("the metrics server", async () => metrics?.stop());
    await progress.part("the database connections", () => runtime.close());
  },
  { timeoutMs: settings.STOP_TIMEOUT_MS, cancelQueries: () => runtime.database.cancelQueries() },
);
