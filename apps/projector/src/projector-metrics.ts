import { type MetricsSettings, type RunningMetricsServer, serveProcessMetrics } from "@dmarc-ledger/process";
import { registerProjectionGauges } from "@dmarc-ledger/projection-engine/metrics";
import type { Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { registerSafeSpfGauges } from "@dmarc-ledger/safe-spf-service/metrics";
import type { Logger } from "pino";
import { Registry } from "prom-client";

/**
 * The projector's /metrics on METRICS_PORT (null when unset): its process metrics, and the
 * projections' lag and Safe SPF statuses, which the API serves too, so that a projector can be
 * watched where it runs.
 */
export async function serveProjectorMetrics(
  settings: MetricsSettings,
  runtime: Pick<Runtime, "db" | "store">,
  logger: Logger,
): Promise<RunningMetricsServer | null> {
  if (settings.METRICS_PORT === null) return null;
  const registry = new Registry();
  registerProjectionGauges(registry, { db: runtime.db, store: runtime.store, projections: allProjections });
  registerSafeSpfGauges(registry, runtime.db);
  return serveProcessMetrics(settings, logger, registry);
}
