import { type MetricsSettings, type RunningMetricsServer, serveProcessMetrics } from "@dmarc-ledger/process";
import { registerReadModelGauges } from "@dmarc-ledger/read-models/metrics";
import type { Runtime } from "@dmarc-ledger/runtime";
import { serviceProjections } from "@dmarc-ledger/runtime/projections";
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
  registerReadModelGauges(registry, {
    db: runtime.db,
    store: runtime.store,
    projections: serviceProjections,
  });
  return serveProcessMetrics(settings, logger, registry);
}
