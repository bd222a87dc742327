import { onboardingSettingsFromEnv } from "@dmarc-ledger/onboarding";
import { sourceIpResolverSettingsFromEnv } from "@dmarc-ledger/source-names";
import type { Command } from "commander";
import { pino } from "pino";
import type { CliIO } from "../io.js";
import { startService } from "../service.js";
import { withRuntime } from "../with-runtime.js";

export function registerStartCommand(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  program
    .command("start")
    .description("run the API and the projector in one process (PORT, default 8080)")
    .action(async () => {
      const logger = pino({ name: "dmarc-ledger", level: env.LOG_LEVEL ?? "info" });
      const port = Number(env.PORT ?? 8080);
      // Wrong settings fail here, before the data directory is opened or migrated.
      sourceIpResolverSettingsFromEnv(env);
      onboardingSettingsFromEnv(env);
      await withRuntime(env, async (runtime) => {
        const service = await startService({ runtime, env, port, logger, bootstrapTenant: true });
        io.out(
          `dmarc-ledger listening on ${service.apiRoot} (region ${service.config.region}; ${runtime.description})`,
        );
        if (service.bootstrapKey) {
          io.out("");
          io.out(
            `First start: created tenant "default" (${service.bootstrapKey.tenantId}). Its API key, shown once:`,
          );
          io.out(`  ${service.bootstrapKey.apiKey}`);
          io.out("Try:");
          io.out(`  curl -H "Authorization: Bearer ${service.bootstrapKey.apiKey}" ${service.apiRoot}`);
          io.out(
            `  curl -X PUT -H "Authorization: Bearer ${service.bootstrapKey.apiKey}" -d domain=example.com ${service.apiRoot}add-domain`,
          );
          io.out(
            `  curl -H "Authorization: Bearer ${service.bootstrapKey.apiKey}" "${service.apiRoot}aggregate_by_domain?start=0"`,
          );
        }
        io.out("Stop with Ctrl-C.");
        await new Promise<void>((resolve) => {
          process.once("SIGINT", () => resolve());
          process.once("SIGTERM", () => resolve());
        });
        await service.stop();
      });
    });
}
