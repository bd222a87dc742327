import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { optionalPort } from "@dmarc-ledger/config";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { z } from "zod";
import { limitHttpConnections } from "./connection-limits.js";

/**
 * What a process without an HTTP API of its own (the intake, the projector) reads to serve its
 * metrics: off unless METRICS_PORT is set. Loopback by default: the figures say how much mail an
 * operator receives, which is nobody else's business; 0.0.0.0 in a container.
 */
export const metricsSettings = {
  METRICS_PORT: optionalPort(),
  METRICS_HOST: z
    .string()
    .optional()
    .transform((value) => value?.trim() || "127.0.0.1"),
};

export interface MetricsSettings {
  METRICS_PORT: number | null;
  METRICS_HOST: string;
}

export interface RunningMetricsServer {
  host: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Serves `registry` (a new one by default) with the process's own metrics (CPU, memory, event-loop
 * lag, GC) on METRICS_PORT; null, and nothing loaded, when it is unset.
 */
export async function serveProcessMetrics(
  settings: MetricsSettings,
  logger: Logger,
  registry?: Registry,
): Promise<RunningMetricsServer | null> {
  if (settings.METRICS_PORT === null) return null;
  const served = await processMetrics(registry);
  return startMetricsServer(served, { host: settings.METRICS_HOST, port: settings.METRICS_PORT }, logger);
}

/**
 * `registry` (a new one by default) with the process's own metrics: CPU, memory, event-loop lag,
 * GC. prom-client loads only when a process asks for it.
 */
export async function processMetrics(registry?: Registry): Promise<Registry> {
  const { collectDefaultMetrics, Registry } = await import("prom-client");
  const served = registry ?? new Registry();
  collectDefaultMetrics({ register: served });
  return served;
}

/**
 * Limits of the socket: a scraper asks once every few seconds, and nobody else should. Per address
 * too, so that one client cannot take the 16 places; the timeouts are checked every second (Node's
 * 30 s default let the 5 s header timeout run to 31 s).
 */
const limits = {
  maxConnections: 16,
  maxConnectionsPerAddress: 4,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveMs: 5_000,
  checkingIntervalMs: 1_000,
};

/**
 * Serves `registry` in Prometheus's text format at GET /metrics, and GET /healthz (alive), on a
 * small HTTP server of its own. Anything else is 404 (405 for another method on those paths).
 * Rejects when the port cannot be bound.
 */
export async function startMetricsServer(
  registry: Registry,
  settings: { host: string; port: number },
  logger: Logger,
): Promise<RunningMetricsServer> {
  const server: Server = createServer(
    { connectionsCheckingInterval: limits.checkingIntervalMs },
    async (request, response) => {
      // A target that is no URL (an absolute form such as "http://[") must not throw in here: an
      // error in this handler would end the process.
      const path = pathOf(request.url ?? "");
      if (path === null) {
        response.writeHead(400, { "content-type": "text/plain" }).end("bad request\n");
        return;
      }
      if (path !== "/metrics" && path !== "/healthz") {
        response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
        return;
      }
      if (request.method !== "GET" && request.method !== "HEAD") {
        response
          .writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" })
          .end("method not allowed\n");
        return;
      }
      try {
        const [type, body] =
          path === "/healthz"
            ? ["application/json", '{"status":"ok"}']
            : [registry.contentType, await registry.metrics()];
        response.writeHead(200, { "content-type": type }).end(request.method === "HEAD" ? undefined : body);
      } catch (error) {
        // A collector failed (the database, say): said in the log, not to the scraper.
        logger.error({ err: error }, "collecting metrics failed");
        response.writeHead(500, { "content-type": "text/plain" }).end("collecting metrics failed\n");
      }
    },
  );
  limitHttpConnections(server, { total: limits.maxConnections, perAddress: limits.maxConnectionsPerAddress });
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveMs;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(settings.port, settings.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // Once listening, an accept that fails (EMFILE) is said in the log, not thrown at the process.
  server.on("error", (error) => logger.warn({ err: error }, "metrics server error"));
  const address = server.address() as AddressInfo;
  logger.info({ host: address.address, port: address.port }, "metrics listening");
  return {
    host: address.address,
    port: address.port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

/** The request target's path; null when it is no URL. */
function pathOf(target: string): string | null {
  try {
    return new URL(target, "http://metrics").pathname;
  } catch {
    return null;
  }
}
