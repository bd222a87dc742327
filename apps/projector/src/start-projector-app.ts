import { type AlertsSettings, type DnsStatusChecker, startAlerts } from "@dmarc-ledger/alerts";
import type { RunningProjector } from "@dmarc-ledger/projection-engine";
import type { Runtime } from "@dmarc-ledger/runtime";
import type { SpfResolver } from "@dmarc-ledger/safe-spf";
import { resolverFrom, type SafeSpfSettings, startSafeSpfWorker } from "@dmarc-ledger/safe-spf-service";
import type { Logger } from "pino";
import { rankingMaintenanceFrom } from "./ranking-maintenance.js";
import { runProjector } from "./run-projector.js";
import type { ProjectorSettings } from "./settings.js";

export interface ProjectorAppOptions {
  runtime: Pick<Runtime, "store" | "db">;
  logger: Logger;
  settings: ProjectorSettings & SafeSpfSettings & AlertsSettings;
  /**
   * The resolver the Safe SPF process asks; one of its own from the settings by default (`start`
   * shares one with the refresher: its cache serves both).
   */
  resolver?: SpfResolver;
  /** The onboarding check from live DNS, which the alerts run periodically; none: no DNS watch. */
  checkDomainStatus?: DnsStatusChecker;
}

/**
 * The projector app: every projection and the upkeep of the by-source rankings (runProjector),
 * and beside them the Safe SPF process and the alerts (their evaluator, outbox and deliveries:
 * packages/alerts), which follow the event store in the background too.
 * What apps/projector/src/main.ts runs as a process of its own, and `dmarc-ledger start` in its
 * one process. Stopping stops the alerts and the Safe SPF process first (they append events the
 * projector applies), then the projector, after the batch it is applying.
 */
export function startProjectorApp(options: ProjectorAppOptions): RunningProjector {
  const { runtime, logger, settings } = options;
  const projector = runProjector(runtime, logger, rankingMaintenanceFrom(settings));
  const safeSpf = startSafeSpfWorker({
    store: runtime.store,
    db: runtime.db,
    resolver: options.resolver ?? resolverFrom(settings),
    ...(settings.SAFE_SPF_ZONE ? { publishZone: settings.SAFE_SPF_ZONE } : {}),
    onError: (error) => logger.error({ err: error }, "Safe SPF process failed; retrying"),
  });
  const alerts = startAlerts({
    store: runtime.store,
    db: runtime.db,
    settings,
    ...(options.checkDomainStatus ? { checkDomainStatus: options.checkDomainStatus } : {}),
    onError: (error, what) => logger.error({ err: error }, what),
  });
  return {
    waitFor: projector.waitFor,
    async stop() {
      await alerts.stop();
      await safeSpf.stop();
      await projector.stop();
    },
  };
}
