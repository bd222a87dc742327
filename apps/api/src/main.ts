// The API as a process of its own (production layout): `node apps/api/dist/main.js` after
// `pnpm build`. It reads the read models; run the projector beside it to keep them current.
import { parseSettings, readAllSettings } from "@dmarc-ledger/config";
import { domainStatusChecker, onboardingSettingsFromEnv } from "@dmarc-ledger/onboarding";
import { createLogger, exitOnStartFailure, loggingSettings, stopOnSignal } from "@dmarc-ledger/process";
import { openRuntime, runtimeSettings } from "@dmarc-ledger/runtime";
import { serviceProjections } from "@dmarc-ledger/runtime/projections";
import { userSettingsFromEnv } from "@dmarc-ledger/users/settings";
import { createApiApp } from "./app.js";
import { apiConfigFrom } from "./config.js";
import { builtDashboard } from "./dashboard-root.js";
import { bindPort } from "./listen.js";
import { countingAppends, createServiceMetrics } from "./observability/metrics.js";
import { apiSettings } from "./settings.js";

const { settings, onboarding, users } = exitOnStartFailure(() =>
  readAllSettings({
    settings: () => parseSettings({ ...runtimeSettings, ...apiSettings, ...loggingSettings }, process.env),
    onboarding: () => onboardingSettingsFromEnv(process.env),
    users: () => userSettingsFromEnv(process.env),
  }),
);
const logger = createLogger(settings, "api");
const server = await exitOnStartFailure(() => bindPort(settings.PORT));
const runtime = await exitOnStartFailure(() => openRuntime(process.env));
const config = apiConfigFrom(settings, server.port);
const metrics = createServiceMetrics({
  db: runtime.db,
  store: runtime.store,
  projections: serviceProjections,
});
const app = createApiApp({
  db: runtime.db,
  store: countingAppends(runtime.store, metrics.eventsAppended),
  projections: serviceProjections,
  config,
  logger,
  metrics,
  checkDomainStatus: domainStatusChecker(onboarding),
  users,
  webRoot: builtDashboard(),
});
server.serve(app.callback());
logger.info({ apiRoot: config.publicBaseUrl, data: runtime.description }, "listening");

stopOnSignal(logger, async () => {
  await server.close();
  await runtime.close();
});
