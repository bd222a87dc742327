import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { bindPort } from "@dmarc-ledger/api/listen";
import { ConfigError, parseSettings, type SettingProblem } from "@dmarc-ledger/config";
import {
  connectionLost,
  createLogger,
  StopTimeoutError,
  startedByPackageManager,
  stopWithin,
  whenParentExits,
} from "@dmarc-ledger/process";
import type { CliIO } from "../io.js";
import { serviceSettings } from "../settings.js";
import { withRuntime } from "../with-runtime.js";

/** `start`: the service in this process until SIGINT or SIGTERM. */
export async function runStart(io: CliIO, env: NodeJS.ProcessEnv): Promise<void> {
  buildDashboardIfStale(io, env);
  // In this order: every setting checked, then the port bound, then the data opened; so a
  // process that cannot serve stops at once, before it has created anything.
  const settings = await checkAllSettings(env);
  const logger = createLogger(settings, "dmarc-ledger");
  const server = await bindPort(settings.PORT, undefined, {
    maxConnectionsPerIp: settings.MAX_CONNECTIONS_PER_IP,
  });
  let runtimeOpened = false;
  try {
    await withRuntime(
      env,
      async (runtime) => {
        runtimeOpened = true;
        // Imported once the data is open: the service's modules take seconds to load, and a start
        // that cannot serve (a wrong setting, a taken port, a held data directory) stops before.
        const [{ runCliHere }, { startService }] = await Promise.all([
          import("../program.js"),
          import("../service.js"),
        ]);
        const service = await startService({
          runtime,
          env,
          port: server.port,
          server,
          logger,
          bootstrapTenant: true,
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
        if (service.bootstrapKey) printBootstrapKey(io, service.apiRoot, service.bootstrapKey);
        io.err("Stop with Ctrl-C.");
        const reason = await new Promise<string>((resolve) => {
          process.once("SIGINT", () => resolve("SIGINT"));
          process.once("SIGTERM", () => resolve("SIGTERM"));
          if (startedByPackageManager(env)) whenParentExits(() => resolve("the package manager exited"));
        });
        logger.info({ reason }, "stopping: finishing requests in flight and the projection batch");
        try {
          await stopWithin(logger, () => service.stop(), {
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

/**
 * `pnpm start` in a checkout builds the dashboard first when its build is missing or older than
 * its sources (scripts/build-web.mjs --if-stale: a hash of the sources, a few milliseconds when
 * current). Here, in this process, and not in the script line: a shell between pnpm and the
 * service would outlive pnpm's stop. A failed build is said and the API starts all the same.
 */
function buildDashboardIfStale(io: CliIO, env: NodeJS.ProcessEnv): void {
  if (env.npm_lifecycle_event !== "start") return;
  const script = fileURLToPath(new URL("../../../../scripts/build-web.mjs", import.meta.url));
  if (!existsSync(script)) return;
  // Its lines go to stderr: stdout carries JSON log lines only.
  const built = spawnSync(process.execPath, [script, "--if-stale"], { stdio: ["ignore", 2, 2] });
  if (built.status !== 0) io.err("The dashboard could not be built (see above); the API starts without it.");
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

/**
 * Every setting `start` reads: its own and those of the parts it runs beside the API (intake,
 * DNS server, refresher, source names, onboarding), checked before the port is bound or the data
 * directory opened, every wrong variable of every part named in one message.
 */
async function checkAllSettings(env: NodeJS.ProcessEnv) {
  const [intakeProcess, intake, dns, safeSpf, sourceNames, onboarding, users] = await Promise.all([
    import("@dmarc-ledger/intake-process"),
    import("@dmarc-ledger/intake"),
    import("@dmarc-ledger/dns"),
    import("@dmarc-ledger/safe-spf-service"),
    import("@dmarc-ledger/source-names"),
    import("@dmarc-ledger/onboarding"),
    import("@dmarc-ledger/users/settings"),
  ]);
  let settings: ReturnType<typeof parseSettings<typeof serviceSettings>> | undefined;
  const checks = [
    () => {
      settings = parseSettings(serviceSettings, env);
    },
    () => intakeProcess.intakeChannelSettingsFromEnv(env),
    () => intake.intakeSettingsFromEnv(env),
    () => dns.dnsSettingsFromEnv(env, { defaultPort: 5353, required: false }),
    () => safeSpf.safeSpfRefreshSettingsFromEnv(env),
    () => sourceNames.sourceIpResolverSettingsFromEnv(env),
    () => onboarding.onboardingSettingsFromEnv(env),
    () => users.userSettingsFromEnv(env),
  ];
  const problems: SettingProblem[] = [];
  for (const check of checks) {
    try {
      check();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const problem of error.problems) {
        if (!problems.some((p) => p.variable === problem.variable)) problems.push(problem);
      }
    }
  }
  if (problems.length > 0 || !settings) throw new ConfigError(problems);
  return settings;
}
