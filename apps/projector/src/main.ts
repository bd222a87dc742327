// The projector as a process of its own (production layout): `tsx apps/projector/src/main.ts`.
import { openRuntime } from "@dmarc-ledger/runtime";
import { resolverFromEnv, startSafeSpfWorker } from "@dmarc-ledger/safe-spf-service";
import { pino } from "pino";
import { runProjector } from "./run-projector.js";

const logger = pino({ name: "projector" });
const runtime = await openRuntime();
const projector = runProjector(runtime, logger);
// The Safe SPF process runs beside the projector: both follow the event store in the background.
const safeSpf = startSafeSpfWorker({
  store: runtime.store,
  db: runtime.db,
  resolver: resolverFromEnv(process.env),
  ...(process.env.SAFE_SPF_ZONE ? { publishZone: process.env.SAFE_SPF_ZONE } : {}),
  onError: (error) => logger.error({ err: error }, "Safe SPF process failed; retrying"),
});
logger.info(`projecting from ${runtime.description}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    await safeSpf.stop();
    await projector.stop();
    await runtime.close();
    process.exit(0);
  });
}
