// The intake as a process of its own (production layout, under DATABASE_URL):
// `tsx apps/ingest/src/main.ts`. Several may run at once: reports are stored once whoever gets them.
import { ConfigError, oneOf, parseSettings } from "@dmarc-ledger/config";
import { intakeLimits, intakeSettingsFromEnv } from "@dmarc-ledger/ingestion";
import { openRuntime } from "@dmarc-ledger/runtime";
import { pino } from "pino";
import { ingestSettingsFromEnv } from "./settings.js";
import { startIngest } from "./start-ingest.js";

const levels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
// Written synchronously: pino's default stdout stream writes in the background, and the lines
// in flight when process.exit runs come out after later ones or not at all (the last lines of a
// stop, "stopped" among them, or the reason start-up failed).
const stdout = () => pino.destination({ dest: 1, sync: true });
let settings: ReturnType<typeof ingestSettingsFromEnv>;
let level: (typeof levels)[number];
try {
  ({ LOG_LEVEL: level } = parseSettings({ LOG_LEVEL: oneOf(levels, "info") }, process.env));
  settings = ingestSettingsFromEnv(process.env);
  intakeSettingsFromEnv(process.env);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  pino({ name: "ingest" }, stdout()).fatal({ problems: error.problems }, error.message);
  process.exit(1);
}
const logger = pino({ name: "ingest", level }, stdout());
if (!settings.smtp && !settings.imap) {
  logger.fatal(
    "no intake channel is configured: set REPORTS_DOMAIN to receive reports by SMTP, or IMAP_URL to read a mailbox",
  );
  process.exit(1);
}

const runtime = await openRuntime();
const running = await startIngest({
  store: runtime.store,
  database: runtime.database,
  limits: intakeLimits(intakeSettingsFromEnv(process.env)),
  settings,
  logger,
});
logger.info({ channels: running.channels }, `receiving reports (${runtime.description})`);

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "stopping: no new messages; finishing those in flight");
    await running.stop();
    await runtime.close();
    logger.info("stopped");
    process.exit(0);
  });
}
