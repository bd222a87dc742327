// The projector as a process of its own (production layout): `tsx apps/projector/src/main.ts`.
import { openRuntime } from "@dmarc-ledger/runtime";
import { pino } from "pino";
import { runProjector } from "./run-projector.js";

const logger = pino({ name: "projector" });
const runtime = await openRuntime();
const projector = runProjector(runtime, logger);
logger.info(`projecting from ${runtime.description}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    await projector.stop();
    await runtime.close();
    process.exit(0);
  });
}
