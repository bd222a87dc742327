// The intake as a process of its own (production layout, under DATABASE_URL):
// `node apps/intake/dist/main.js` after `pnpm build`. Several may run at once: reports are stored
// once whoever gets them.
import { ConfigError, parseSettings, readAllSettings } from "@dmarc-ledger/config";
import { intakeLimits, intakeSettingsFromEnv } from "@dmarc-ledger/intake";
import { createIntakeMetrics } from "@dmarc-ledger/intake/metrics";
import { personalDataSettingsFromEnv } from "@dmarc-ledger/personal-data/settings";
import {
  connectionLost,
  createLogger,
  loggingSettings,
  metricsSettings,
  serveProcessMetrics,
  stopOnSignal,
  stopSettings,
} from "@dmarc-ledger/process";
import { openRuntime, runtimeDataKeys, runtimeSettings } from "@dmarc-ledger/runtime";
import { pino } from "pino";
import { Registry } from "prom-client";
import { intakeChannelSettingsFromEnv } from "./settings.js";
import { startIntakeApp } from "./start-intake.js";

/**
 * Start-up failures are one JSON line (fatal) on stdout and exit 1, with what is wrong and no
 * stack: before the settings are read there is no logger of the process's own yet.
 */
function fail(message: string, fields: Record<string, unknown> = {}): never {
  pino({ name: "intake" }, pino.destination({ dest: 1, sync: true })).fatal(fields, message);
  process.exit(1);
}

// Every setting is checked before anything opens or listens, and every wrong one is named.
const { settings, channels, limits } = (() => {
  try {
    return readAllSettings({
      settings: () =>
        parseSettings(
          { ...runtimeSettings, ...loggingSettings, ...stopSettings, ...metricsSettings },
          process.env,
        ),
      channels: () => intakeChannelSettingsFromEnv(process.env),
      limits: () => intakeSettingsFromEnv(process.env),
      personalData: () => personalDataSettingsFromEnv(process.env),
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return fail(error.message, { problems: error.problems });
  }
})();
const logger = createLogger(settings, "intake");
if (!channels.smtp && !channels.imap) {
  fail(
    "no intake channel is configured: set REPORTS_DOMAIN to receive reports by SMTP, or IMAP_URL to read a mailbox",
  );
}

// Registered before anything starts: a SIGTERM while the process starts (a supervisor that
// changes its mind, or a port that answers before the process has said so) stops what has
// started and exits 0, rather than ending it by the signal's default. No new messages; those in
// flight are stored and answered first.
const started: {
  runtime?: Awaited<ReturnType<typeof openRuntime>>;
  metrics?: Awaited<ReturnType<typeof serveProcessMetrics>>;
  intake?: Awaited<ReturnType<typeof startIntakeApp>>;
} = {};
stopOnSignal(
  logger,
  async (progress) => {
    await progress.part("the intake", async () => started.intake?.stop());
    await progress.part("the metrics server", async () => started.metrics?.stop());
    await progress.part("the database connections", async () => started.runtime?.close());
  },
  {
    timeoutMs: settings.STOP_TIMEOUT_MS,
    cancelQueries: () => started.runtime?.database.cancelQueries() ?? Promise.resolve(0),
  },
);

const reason = (error: unknown) => (error instanceof Error ? error.message : String(error));
const runtime = await openRuntime(process.env, {
  onConnectionError: connectionLost(logger),
  service: true,
}).catch((error: unknown) => fail(`cannot open the database: ${reason(error)}`));
started.runtime = runtime;
// Counted always (cheap); served, with the process's own metrics, when METRICS_PORT is set.
const registry = new Registry();
started.metrics = await serveProcessMetrics(settings, logger, registry).catch(async (error: unknown) => {
  await runtime.close();
  return fail(`cannot serve metrics: ${reason(error)}`);
});
const dataKeys = await runtimeDataKeys(runtime).catch(async (error: unknown) => {
  await runtime.close();
  return fail(error instanceof ConfigError ? error.message : `cannot open the data keys: ${reason(error)}`);
});
started.intake = await startIntakeApp({
  dataKeys,
  store: runtime.store,
  database: runtime.database,
  limits: intakeLimits(limits),
  settings: channels,
  logger,
  metrics: createIntakeMetrics(registry),
}).catch(async (error: unknown) => {
  await started.metrics?.stop();
  await runtime.close();
  return fail(`cannot start the intake: ${reason(error)}`);
});
logger.info({ channels: started.intake.channels }, `receiving reports (${runtime.description})`);
