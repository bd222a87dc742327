import { type MetricsSettings, type RunningMetricsServer, startMetricsServer } from "@dmarc-ledger/process";
import { allProjections } from "@dmarc-ledger/read-models";
import { registerReadModelGauges } from "@dmarc-ledger/read-models/metrics";
import type { Runtime } from "@dmarc-ledger/runtime";
import type { Logger } from "pino";
import { collectDefaultMetrics, Registry } from "prom-client";

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
  collectDefaultMetrics({ register: registry });
  registerReadModelGauges(registry, { db: runtime.db, store: runtime.store, projections: allProjections });
  return startMetricsServer(registry, { host: settings.METRICS_HOST, port: settings.METRICS_PORT }, logger);
}
