// The intake as a process of its own (production layout, under DATABASE_URL):
// `node apps/ingest/dist/main.js` after `pnpm build`. Several may run at once: reports are stored
// once whoever gets them.
import { ConfigError, parseSettings, readAllSettings } from "@dmarc-ledger/config";
import { intakeLimits, intakeSettingsFromEnv } from "@dmarc-ledger/ingestion";
import { createIntakeMetrics } from "@dmarc-ledger/ingestion/metrics";
import {
  createLogger,
  loggingSettings,
  metricsSettings,
  serveProcessMetrics,
  stopOnSignal,
} from "@dmarc-ledger/process";
import { openRuntime, runtimeSettings } from "@dmarc-ledger/runtime";
import { pino } from "pino";
import { Registry } from "prom-client";
import { ingestSettingsFromEnv } from "./settings.js";
import { startIngest } from "./start-ingest.js";

/**
 * Start-up failures are one JSON line (fatal) on stdout and exit 1, with what is wrong and no
 * stack: before the settings are read there is no logger of the process's own yet.
 */
function fail(message: string, fields: Record<string, unknown> = {}): never {
  pino({ name: "ingest" }, pino.destination({ dest: 1, sync: true })).fatal(fields, message);
  process.exit(1);
}

// Every setting is checked before anything opens or listens, and every wrong one is named.
const { settings, ingest, intake } = (() => {
  try {
    return readAllSettings({
      settings: () =>
        parseSettings({ ...runtimeSettings, ...loggingSettings, ...metricsSettings }, process.env),
      ingest: () => ingestSettingsFromEnv(process.env),
      intake: () => intakeSettingsFromEnv(process.env),
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return fail(error.message, { problems: error.problems });
  }
})();
const logger = createLogger(settings, "ingest");
if (!ingest.smtp && !ingest.imap) {
  fail(
    "no intake channel is configured: set REPORTS_DOMAIN to receive reports by SMTP, or IMAP_URL to read a mailbox",
  );
}

const reason = (error: unknown) => (error instanceof Error ? error.message : String(error));
const runtime = await openRuntime(process.env).catch((error: unknown) =>
  fail(`cannot open the database: ${reason(error)}`),
);
// Counted always (cheap); served, with the process's own metrics, when METRICS_PORT is set.
const registry = new Registry();
const metrics = await serveProcessMetrics(settings, logger, registry).catch(async (error: unknown) => {
  await runtime.close();
  return fail(`cannot serve metrics: ${reason(error)}`);
});
const running = await startIngest({
  store: runtime.store,
  database: runtime.database,
  limits: intakeLimits(intake),
  settings: ingest,
  logger,
  metrics: createIntakeMetrics(registry),
}).catch(async (error: unknown) => {
  await metrics?.stop();
  await runtime.close();
  return fail(`cannot start the intake: ${reason(error)}`);
});
logger.info({ channels: running.channels }, `receiving reports (${runtime.description})`);

// No new messages; those in flight are stored and answered first.
stopOnSignal(logger, async () => {
  await running.stop();
  await metrics?.stop();
  await runtime.close();
});
