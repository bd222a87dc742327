import { runLeasedJob } from "@dmarc-ledger/projection-engine";
import type { Runtime } from "@dmarc-ledger/runtime";
import type { SpfResolver } from "@dmarc-ledger/safe-spf";
import {
  resolverFrom,
  type SafeSpfRefreshSettings,
  type SafeSpfSettings,
  startSafeSpfRefresher,
} from "@dmarc-ledger/safe-spf-service";
import { type SourceIpResolverSettings, startSourceIpResolverFromSettings } from "@dmarc-ledger/source-names";
import type { Logger } from "pino";
import { type RunningDnsServer, startDnsServer } from "./dns-server.js";
import type { DnsSettings } from "./settings.js";

export interface DnsAppOptions {
  runtime: Pick<Runtime, "store" | "db">;
  logger: Logger;
  /** The nameservers the refresher asks (DNS_NAMESERVERS, DNS_TIMEOUT_MS) and SAFE_SPF_ZONE. */
  settings: SafeSpfSettings;
  /** The authoritative server's; null runs no server (`start` without SAFE_SPF_ZONE). */
  dns: DnsSettings | null;
  refresh: SafeSpfRefreshSettings;
  sourceNames: SourceIpResolverSettings;
  /** One of its own from the settings by default (`start` shares one with the Safe SPF process). */
  resolver?: SpfResolver;
}

export interface RunningDnsApp {
  /** null when no server runs. */
  server: RunningDnsServer | null;
  stop(): Promise<void>;
}

/**
 * The DNS app: the authoritative server for the Safe SPF zone and the reports domain, the
 * refresher that keeps Safe SPF records current, and the resolver of report sources' names (when
 * its settings turn it on). What apps/dns/src/main.ts runs as a process of its own, and
 * `dmarc-ledger start` in its one process.
 */
export async function startDnsApp(options: DnsAppOptions): Promise<RunningDnsApp> {
  const { runtime, logger, settings } = options;
  // First: a port that cannot be had stops the start before anything runs.
  const server = options.dns
    ? await startDnsServer({ store: runtime.store, settings: options.dns, logger })
    : null;
  const resolver = options.resolver ?? resolverFrom(settings);
  // One refresher per deployment (its resolver's cache serves every domain), in whichever DNS
  // process holds its lease; its per-domain leases keep two from computing one domain regardless.
  const refresher = runLeasedJob({
    db: runtime.db,
    name: "safe_spf_refresher",
    onError: (error) =>
      logger.error({ err: error }, "renewing the Safe SPF refresher's lease failed; retrying"),
    start: () =>
      startSafeSpfRefresher({
        store: runtime.store,
        db: runtime.db,
        resolver,
        settings: options.refresh,
        ...(settings.SAFE_SPF_ZONE ? { publishZone: settings.SAFE_SPF_ZONE } : {}),
        onError: (error) => logger.error({ err: error }, "Safe SPF refresher failed; retrying"),
        onRefreshed: (domain, outcome) => {
          if (outcome.kind === "changed")
            logger.info(
              { domain, added: outcome.added, removed: outcome.removed },
              "Safe SPF record changed",
            );
          else if (outcome.kind === "failed" && outcome.appended)
            logger.warn(
              { domain, failure: outcome.failure },
              "Safe SPF refresh failed; the last good record stays",
            );
        },
      }),
  });
  // It always names sources (offline databases, the reports' evidence); whether it asks DNS is
  // the settings' (packages/source-names/README.md). One per deployment (its lease,
  // job:source_ip_resolver): two would name the same sources.
  const sourceIpResolver = runLeasedJob({
    db: runtime.db,
    name: "source_ip_resolver",
    onError: (error) =>
      logger.error({ err: error }, "renewing the source-IP resolver's lease failed; retrying"),
    start: () =>
      startSourceIpResolverFromSettings(options.sourceNames, {
        store: runtime.store,
        db: runtime.db,
        onError: (error) => logger.error({ err: error }, "source-IP resolver failed; retrying"),
        onResolved: (answer) => logger.debug({ sourceIp: answer }, "source IP resolved"),
      }),
  });
  return {
    server,
    async stop() {
      await server?.stop();
      await refresher.stop();
      await sourceIpResolver?.stop();
    },
  };
}
