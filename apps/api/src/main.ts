// The API as a process of its own (production layout): `node apps/api/dist/main.js` after
// `pnpm build`. It reads the read models; run the projector beside it to keep them current.
import { parseSettings, readAllSettings } from "@dmarc-ledger/config";
import { domainStatusChecker, onboardingSettingsFromEnv } from "@dmarc-ledger/onboarding";
import { personalDataSettingsFromEnv } from "@dmarc-ledger/personal-data/settings";
import {
  connectionLost,
  createLogger,
  exitOnStartFailure,
  loggingSettings,
  processMetrics,
  stopOnSignal,
  stopSettings,
} from "@dmarc-ledger/process";
import { openReadReplica, readReplicaSettings, replicaNeedsPrimary } from "@dmarc-ledger/read-replica";
import { openRuntime, runtimeDataKeys, runtimeSettings } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { userSettingsFromEnv } from "@dmarc-ledger/users/settings";
import { apiConfigFrom } from "./config.js";
import { builtDashboard } from "./dashboard-root.js";
import { bindPort } from "./listen.js";
import { apiSettings } from "./settings.js";
import { startApiApp } from "./start-api-app.js";

const { settings, onboarding, users } = exitOnStartFailure(() =>
  readAllSettings({
    settings: () =>
      parseSettings(
        { ...runtimeSettings, ...apiSettings, ...readReplicaSettings, ...loggingSettings, ...stopSettings },
        process.env,
      ),
    replica: () => replicaNeedsPrimary(process.env),
    onboarding: () => onboardingSettingsFromEnv(process.env),
    users: () => userSettingsFromEnv(process.env),
    personalData: () => personalDataSettingsFromEnv(process.env),
  }),
);
const logger = createLogger(settings, "api");
// /metrics answers from the moment the port is bound, with the process metrics until the rest is.
const registry = await processMetrics();
const server = await exitOnStartFailure(() =>
  bindPort(settings.PORT, undefined, {
    maxConnectionsPerIp: settings.MAX_CONNECTIONS_PER_IP,
    metrics: registry,
  }),
);
const runtime = await exitOnStartFailure(() =>
  openRuntime(process.env, { onConnectionError: connectionLost(logger), service: true }),
);
const replica = settings.DATABASE_REPLICA_URL
  ? await exitOnStartFailure(() =>
      openReadReplica(settings.DATABASE_REPLICA_URL!, {
        waitMs: settings.REPLICA_WAIT_MS,
        statementTimeoutMs: settings.DATABASE_STATEMENT_TIMEOUT_MS,
        onConnectionError: connectionLost(logger),
      }),
    )
  : null;
const dataKeys = await exitOnStartFailure(() => runtimeDataKeys(runtime));
const config = apiConfigFrom(settings, server.port);
startApiApp({
  dataKeys,
  server,
  db: runtime.db,
  store: runtime.store,
  projections: allProjections,
  config,
  logger,
  checkDomainStatus: domainStatusChecker(onboarding),
  registry,
  users,
  webRoot: builtDashboard(),
  sharedRateLimits: runtime.database.concurrentSessions,
  replica,
});
logger.info({ apiRoot: config.publicBaseUrl, data: runtime.description }, "listening");

stopOnSignal(
  logger,
  async (progress) => {
    await progress.part("the HTTP server", () => server.close());
    await progress.part("the replica's connections", async () => replica?.close());
    await progress.part("the database connections", () => runtime.close());
  },
  { timeoutMs: settings.STOP_TIMEOUT_MS, cancelQueries: () => runtime.database.cancelQueries() },
);
