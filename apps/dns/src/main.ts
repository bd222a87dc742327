// The service's DNS side as a process of its own (production layout):
// `node --conditions=dmarc-ledger-dist apps/dns/dist/main.js` after `pnpm build`. It serves the
// Safe SPF zone and the reports domain, keeps Safe SPF records current and resolves the reverse
// DNS of report sources. Several may run at
// once: each follows the event store into its own in-memory zone, and the refreshers share the
// work through leases (packages/safe-spf-service), so no domain is computed twice.
import { parseSettings, readAllSettings } from "@dmarc-ledger/config";
import {
  connectionLost,
  createLogger,
  exitOnStartFailure,
  loggingSettings,
  metricsSettings,
  serveProcessMetrics,
  stopOnSignal,
  stopSettings,
} from "@dmarc-ledger/process";
import { openRuntime, runtimeSettings } from "@dmarc-ledger/runtime";
import { safeSpfRefreshSettingsFromEnv, safeSpfSettings } from "@dmarc-ledger/safe-spf-service";
import { sourceIpResolverSettingsFromEnv } from "@dmarc-ledger/source-names";
import { dnsSettingsFromEnv } from "./settings.js";
import { startDnsApp } from "./start-dns-app.js";

// Every setting is checked before anything opens or listens.
const { settings, dnsSettings, refreshSettings, sourceNames } = exitOnStartFailure(() =>
  readAllSettings({
    settings: () =>
      parseSettings(
        { ...runtimeSettings, ...safeSpfSettings, ...loggingSettings, ...stopSettings, ...metricsSettings },
        process.env,
      ),
    dnsSettings: () => dnsSettingsFromEnv(process.env, { defaultPort: 53, required: true })!,
    refreshSettings: () => safeSpfRefreshSettingsFromEnv(process.env),
    // Resolving report sources is this process's job: on unless SOURCE_IP_RESOLVER=off.
    sourceNames: () => sourceIpResolverSettingsFromEnv(process.env, { defaultMode: "on" }),
  }),
);
const logger = createLogger(settings, "dns");
const runtime = await exitOnStartFailure(() =>
  openRuntime(process.env, { onConnectionError: connectionLost(logger), service: true }),
);
const dnsApp = await exitOnStartFailure(() =>
  startDnsApp({ runtime, logger, settings, dns: dnsSettings, refresh: refreshSettings, sourceNames }),
);
const dns = dnsApp.server!;
// Off unless METRICS_PORT is set: the process's own metrics.
const metrics = await exitOnStartFailure(() => serveProcessMetrics(settings, logger));
logger.info(
  { host: dns.host, port: dns.ports.udp, data: runtime.description },
  "serving DNS (UDP and TCP) and keeping Safe SPF records current",
);

stopOnSignal(
  logger,
  async (progress) => {
    await progress.part("the DNS app", () => dnsApp.stop());
    await progress.part("the metrics server", async () => metrics?.stop());
    await progress.part("the database connections", () => runtime.close());
  },
  { timeoutMs: settings.STOP_TIMEOUT_MS, cancelQueries: () => runtime.database.cancelQueries() },
);
