import { bindPort } from "@dmarc-ledger/api/listen";
import {
  connectionLost,
  createLogger,
  processMetrics,
  StopTimeoutError,
  startedByPackageManager,
  stopWithin,
  whenParentExits,
} from "@dmarc-ledger/process";
import type { CliIO } from "../io.js";
import { startSettings } from "../settings.js";
import { withRuntime } from "../with-runtime.js";

/** `start`: the service in this process until SIGINT or SIGTERM. */
export async function runStart(io: CliIO, env: NodeJS.ProcessEnv): Promise<void> {
  // In this order: every setting checked, then the port bound, then the data opened; so a
  // process that cannot serve stops at once, before it has created anything.
  const settings = startSettings(env);
  const logger = createLogger(settings, "dmarc-ledger");
  // /metrics answers from the moment the port is bound, with the process metrics until the rest is.
  const metricsRegistry = await processMetrics();
  const server = await bindPort(settings.PORT, undefined, {
    maxConnectionsPerIp: settings.MAX_CONNECTIONS_PER_IP,
    metrics: metricsRegistry,
  });
  let runtimeOpened = false;
  // The service's modules load while the data directory opens (a first start makes its database
  // then, outside this process). A start that cannot open it stops all the same: the loading is
  // dropped with the process.
  const serviceModules = Promise.all([import("../program.js"), import("../service.js")]);
  serviceModules.catch(() => {});
  try {
    await withRuntime(
      env,
      async (runtime) => {
        runtimeOpened = true;
        const [{ runCliHere }, { startService }] = await serviceModules;
        const service = await startService({
          runtime,
          env,
          port: server.port,
          server,
          logger,
          bootstrapTenant: true,
          metricsRegistry,
          // Commands handed over print links to this service, on the port it really listens on.
          controlCommands: (argv, commandIO) =>
            runCliHere(argv, commandIO, {
              ...env,
              PUBLIC_BASE_URL: env.PUBLIC_BASE_URL || `http://localhost:${server.port}/api/`,
            }),
        });
        logger.info(
          { apiRoot: service.apiRoot, region: service.config.region, data: runtime.description },
          "listening",
        );
        // Human text, on stderr: stdout carries only JSON log lines. The key is never logged.
        io.err(
          `dmarc-ledger listening on ${service.apiRoot} (region ${service.config.region}; ${runtime.description})`,
        );
        io.err(
          service.dashboardUrl
            ? `Dashboard: ${service.dashboardUrl}`
            : "The dashboard is not built (apps/web/dist): `pnpm build` builds it, `pnpm start` too.",
        );
        for (const channel of service.intake.channels) io.err(`Receiving reports: ${channel}`);
        if (service.dnsPort !== null) {
          io.err(
            `DNS (authoritative for SAFE_SPF_ZONE and REPORTS_DOMAIN) on port ${service.dnsPort}, UDP and TCP`,
          );
        }
        io.err(
          service.reverseDns.enabled
            ? `Reverse DNS of report sources: on (asking ${service.reverseDns.nameservers.join(", ")}; SOURCE_IP_RESOLVER=off turns it off)`
            : "Reverse DNS of report sources: off (SOURCE_IP_RESOLVER=off); sources are named from the shipped databases and the reports",
        );
        if (service.bootstrapKey) printBootstrapKey(io, service.apiRoot, service.bootstrapKey);
        io.err("Stop with Ctrl-C.");
        const reason = await new Promise<string>((resolve) => {
          process.once("SIGINT", () => resolve("SIGINT"));
          process.once("SIGTERM", () => resolve("SIGTERM"));
          if (startedByPackageManager(env)) whenParentExits(() => resolve("the package manager exited"));
        });
        logger.info({ reason }, "stopping: finishing requests in flight and the projection batch");
        try {
          await stopWithin(logger, (progress) => service.stop(progress), {
            timeoutMs: settings.STOP_TIMEOUT_MS,
            cancelQueries: () => runtime.database.cancelQueries(),
          });
        } catch (error) {
          // What is left is dropped with the process: checkpoints stay where they were.
          if (error instanceof StopTimeoutError) logger.error(`${error.message}; exiting`);
          else logger.error({ err: error }, "stopping failed");
          process.exit(1);
        }
        logger.info("stopped");
      },
      { longRunning: true, service: true, onConnectionError: connectionLost(logger) },
    );
  } finally {
    // startService closes the server when it fails; this covers a runtime that never opened.
    if (!runtimeOpened) await server.close(0);
  }
}

function printBootstrapKey(
  io: CliIO,
  apiRoot: string,
  created: { tenantId: string; apiKey: string; adminEmail: string; adminLink: string },
): void {
  io.err("");
  io.err(`First start: created tenant "default" (${created.tenantId}).`);
  io.err(
    `Its admin, ${created.adminEmail}, sets a password here (one-time link) and signs in to the dashboard:`,
  );
  io.err(`  ${created.adminLink}`);
  io.err("Its API key, shown once:");
  io.err(`  ${created.apiKey}`);
  io.err("Try:");
  io.err(`  curl -H "Authorization: Bearer ${created.apiKey}" ${apiRoot}`);
  io.err(
    `  curl -X PUT -H "Authorization: Bearer ${created.apiKey}" -d domain=example.com ${apiRoot}add-domain`,
  );
  io.err(`  curl -H "Authorization: Bearer ${created.apiKey}" "${apiRoot}aggregate_by_domain?start=0"`);
}
