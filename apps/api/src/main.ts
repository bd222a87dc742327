// The API as a process of its own (production layout): `tsx apps/api/src/main.ts`. It reads
// the read models; run apps/projector/src/main.ts beside it to keep them current.
import { domainStatusChecker, onboardingSettingsFromEnv } from "@dmarc-ledger/onboarding";
import { allProjections } from "@dmarc-ledger/read-models";
import { openRuntime } from "@dmarc-ledger/runtime";
import { pino } from "pino";
import { createApiApp } from "./app.js";
import { apiConfigFromEnv } from "./config.js";

const logger = pino({ name: "api" });
const port = Number(process.env.PORT ?? 8080);
const onboarding = onboardingSettingsFromEnv(process.env);
const runtime = await openRuntime();
const config = apiConfigFromEnv(process.env, port);
const app = createApiApp({
  db: runtime.db,
  store: runtime.store,
  projections: allProjections,
  config,
  logger,
  checkDomainStatus: domainStatusChecker(onboarding),
});
const server = app.listen(port, () =>
  logger.info(`listening on ${config.publicBaseUrl} (${runtime.description})`),
);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    server.close(async () => {
      await runtime.close();
      process.exit(0);
    });
  });
}
