import { projectionLags } from "@dmarc-ledger/projection-engine";
import { replicaLag } from "@dmarc-ledger/read-replica";
import { reverseDnsHealth } from "@dmarc-ledger/report-read-models";
import Router from "@koa/router";
import { sql } from "kysely";
import type { Registry } from "prom-client";
import type { ApiDeps, ApiState, ServedDeps } from "../state.js";

/** How long /readyz waits for the database or the event store before calling it unreachable. */
const probeTimeoutMs = 2000;

function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not answer within ${probeTimeoutMs} ms`)),
      probeTimeoutMs,
    );
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** The replica's lag for /readyz: reads go on from the primary while it cannot be asked. */
async function replicaState(deps: ApiDeps) {
  if (!deps.replica) return null;
  try {
    const lag = await withTimeout(replicaLag(deps.db, deps.replica.db), "the replica");
    return { status: "streaming", lagBytes: lag.bytes, lagSeconds: lag.seconds };
  } catch {
    return { status: "unreachable" };
  }
}

/**
 * Reverse DNS of report sources over the last hour, for /readyz's details: resolvers that do not
 * answer leave the service ready (sources keep their other names) but say so here.
 */
async function reverseDnsState(deps: ApiDeps) {
  try {
    return await withTimeout(reverseDnsHealth(deps.db as never), "the source names");
  } catch {
    return null;
  }
}

/** Why the service is not ready, or null when it is. */
async function notReadyBecause(deps: ApiDeps): Promise<string | null> {
  try {
    await withTimeout(sql`select 1`.execute(deps.db), "the database");
  } catch {
    return "the database is unreachable";
  }
  try {
    await withTimeout(deps.store.headPosition(), "the event store");
  } catch {
    return "the event store is unreachable";
  }
  const limit = deps.config.readyMaxLag;
  const lags = await withTimeout(
    projectionLags(deps.db, deps.store, deps.projections, limit + 1),
    "the projection checkpoints",
  );
  const behind = lags.filter((lag) => lag.events > limit);
  if (behind.length > 0) {
    return `projections more than READY_MAX_LAG=${limit} events behind: ${behind.map((lag) => lag.projection).join(", ")}`;
  }
  return null;
}

/**
 * What a supervisor or load balancer asks, without a key: /healthz (the process answers),
 * /readyz (it can serve current data) and /metrics (Prometheus text format).
 */
export function operationsRouter(metrics: Registry | null) {
  const router = new Router<ApiState, { deps: ServedDeps }>();
  router.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  router.get("/readyz", async (ctx) => {
    let reason: string | null;
    try {
      reason = await notReadyBecause(ctx.deps);
    } catch (error) {
      ctx.deps.logger.warn({ err: error }, "readiness check failed");
      reason = "the readiness check failed";
    }
    const replica = await replicaState(ctx.deps);
    // Not asked of a database that did not answer: the answer would wait out another timeout.
    const reverseDns = reason?.includes("unreachable") ? null : await reverseDnsState(ctx.deps);
    ctx.status = reason ? 503 : 200;
    ctx.body = {
      ...(reason ? { status: "not_ready", reason } : { status: "ready" }),
      ...(replica ? { replica } : {}),
      ...(reverseDns ? { reverseDns } : {}),
    };
  });
  if (metrics) {
    router.get("/metrics", async (ctx) => {
      ctx.type = metrics.contentType;
      ctx.body = await metrics.metrics();
    });
  }
  return router;
}
