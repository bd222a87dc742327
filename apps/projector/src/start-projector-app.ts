import { type AlertsSettings, type DnsStatusChecker, startAlerts } from "@dmarc-ledger/alerts";
import { startNatsPublisher } from "@dmarc-ledger/event-feed/nats";
import type { EventBrokerSettings } from "@dmarc-ledger/event-feed/settings";
import type { DataKeys } from "@dmarc-ledger/personal-data";
import { unwatchedStop } from "@dmarc-ledger/process";
import { runLeasedJob } from "@dmarc-ledger/projection-engine";
import type { Runtime } from "@dmarc-ledger/runtime";
import type { SpfResolver } from "@dmarc-ledger/safe-spf";
import { resolverFrom, type SafeSpfSettings, startSafeSpfWorker } from "@dmarc-ledger/safe-spf-service";
import type { Logger } from "pino";
import { rankingMaintenanceFrom } from "./ranking-maintenance.js";
import { startRetentionJob } from "./retention-job.js";
import { type RunningProjectorApp, runProjector } from "./run-projector.js";
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
  /** Opens the addresses of the people the alerts mail (docs/privacy.md, "People"). */
  dataKeys: DataKeys;
  /**
   * EVENTS_NATS_URL's broker, to publish every tenant event to (issue 44), with the CloudEvents
   * `source` (the API root); none: no broker.
   */
  eventBroker?: { settings: EventBrokerSettings; source: string } | null;
}

/**
 * The projector app: every projection and the upkeep of the by-source rankings (runProjector),
 * the retention of personal data (retention-job.ts: once per deployment, by its own lease), and
 * beside them the Safe SPF process, which follows the event store in the background too (in one
 * projector process of the deployment at a time: its lease, `job:safe_spf`), and the alerts
 * (their evaluator and periodic checks once per deployment, by job leases; their outbox and
 * deliveries shared among the processes: packages/alerts).
 * What apps/projector/src/main.ts runs as a process of its own, and `dmarc-ledger start` in its
 * one process. Stopping stops the alerts and the Safe SPF process first (they append events the
 * projector applies), then the projector, after the batch it is applying.
 */
export function startProjectorApp(options: ProjectorAppOptions): RunningProjectorApp {
  const { runtime, logger, settings } = options;
  const projector = runProjector(runtime, logger, rankingMaintenanceFrom(settings));
  const retention = startRetentionJob({
    db: runtime.db,
    store: runtime.store,
    logger,
    intervalMs: settings.RETENTION_INTERVAL_MS,
  });
  const resolver = options.resolver ?? resolverFrom(settings);
  // One Safe SPF process per deployment, in whichever projector holds its lease.
  const safeSpf = runLeasedJob({
    db: runtime.db,
    name: "safe_spf",
    start: () =>
      startSafeSpfWorker({
        store: runtime.store,
        db: runtime.db,
        resolver,
        ...(settings.SAFE_SPF_ZONE ? { publishZone: settings.SAFE_SPF_ZONE } : {}),
        onError: (error) => logger.error({ err: error }, "Safe SPF process failed; retrying"),
      }),
    onError: (error) =>
      logger.error({ err: error }, "renewing the Safe SPF process's lease failed; retrying"),
    onRunning: (running) =>
      logger.info(running ? "running the Safe SPF process" : "no longer running the Safe SPF process"),
  });
  const alerts = startAlerts({
    store: runtime.store,
    db: runtime.db,
    settings,
    dataKeys: options.dataKeys,
    ...(options.checkDomainStatus ? { checkDomainStatus: options.checkDomainStatus } : {}),
    onError: (error, what) => logger.error({ err: error }, what),
  });
  // One publisher per deployment, in whichever projector holds its lease (docs/api.md, "Events").
  const broker = options.eventBroker;
  const publisher = broker
    ? runLeasedJob({
        db: runtime.db,
        name: "events_nats",
        start: () =>
          startNatsPublisher({
            db: runtime.db as never,
            store: runtime.store,
            settings: broker.settings,
            source: broker.source,
            keys: options.dataKeys,
            onError: (error) => logger.error({ err: error }, "publishing events to NATS failed; retrying"),
          }),
        onError: (error) =>
          logger.error({ err: error }, "renewing the events publisher's lease failed; retrying"),
        onRunning: (running) =>
          logger.info(running ? "publishing events to NATS" : "no longer publishing events to NATS"),
      })
    : null;
  return {
    waitFor: projector.waitFor,
    async stop(progress = unwatchedStop) {
      if (publisher) await progress.part("the events publisher", () => publisher.stop());
      await progress.part("the alerts", () => alerts.stop());
      await progress.part("the Safe SPF process", () => safeSpf.stop());
      await progress.part("the retention job", () => retention.stop());
      await projector.stop(progress);
    },
  };
}
