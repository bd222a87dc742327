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
import {
  resolverFrom,
  safeSpfRefreshSettingsFromEnv,
  safeSpfSettings,
  startSafeSpfRefresher,
} from "@dmarc-ledger/safe-spf-service";
import {
  sourceIpResolverSettingsFromEnv,
  startSourceIpResolverFromSettings,
} from "@dmarc-ledger/source-names";
import { startDnsServer } from "./dns-server.js";
import { dnsSettingsFromEnv } from "./settings.js";

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
const dns = await exitOnStartFailure(() =>
  startDnsServer({ store: runtime.store, settings: dnsSettings, logger }),
);
// Off unless METRICS_PORT is set: the process's own metrics.
const metrics = await exitOnStartFailure(() => serveProcessMetrics(settings, logger));
const refresher = startSafeSpfRefresher({
  store: runtime.store,
  db: runtime.db,
  resolver: resolverFrom(settings),
  settings: refreshSettings,
  ...(settings.SAFE_SPF_ZONE ? { publishZone: settings.SAFE_SPF_ZONE } : {}),
  onError: (error) => logger.error({ err: error }, "Safe SPF refresher failed; retrying"),
  onRefreshed: (domain, outcome) => {
    if (outcome.kind === "changed")
      logger.info({ domain, added: outcome.added, removed: outcome.removed }, "Safe SPF record changed");
    else if (outcome.kind === "failed" && outcome.appended)
      logger.warn(
        { domain, failure: outcome.failure },
        "Safe SPF refresh failed; the last good record stays",
      );
  },
});
const sourceIpResolver = startSourceIpResolverFromSettings(sourceNames, {
  store: runtime.store,
  db: runtime.db,
  onError: (error) => logger.error({ err: error }, "source-IP resolver failed; retrying"),
  onResolved: (answer) => logger.debug({ sourceIp: answer }, "source IP resolved"),
});
logger.info(
  { host: dns.host, port: dns.ports.udp, data: runtime.description },
  "serving DNS (UDP and TCP) and keeping Safe SPF records current",
);

stopOnSignal(
  logger,
  async () => {
    await dns.stop();
    await metrics?.stop();
    await refresher.stop();
    await sourceIpResolver?.stop();
    await runtime.close();
  },
  { timeoutMs: settings.STOP_TIMEOUT_MS, cancelQueries: () => runtime.database.cancelQueries() },
);
