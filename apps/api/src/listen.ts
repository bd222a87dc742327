import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type ConnectionLimiter, limitHttpConnections } from "@dmarc-ledger/process/connection-limits";

/** The port cannot be listened on: said plainly, so that the process can end with status 1. */
export class PortUnavailableError extends Error {
  override readonly name = "PortUnavailableError";
  constructor(
    readonly port: number,
    readonly code: string,
  ) {
    super(
      code === "EADDRINUSE"
        ? `cannot listen on port ${port}: another process is using it (set PORT to a free port)`
        : code === "EACCES"
          ? `cannot listen on port ${port}: not permitted (ports below 1024 need privileges; set PORT)`
          : `cannot listen on port ${port}: ${code}`,
    );
  }
}

/** Limits of every API socket: slow or idle clients must not hold connections open for ever. */
export interface HttpLimits {
  requestTimeoutMs: number;
  /** A connection that has not sent its request's headers within this is answered 408 and closed. */
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxHeadersCount: number;
  /** Connections at once, from everyone. */
  maxConnections: number;
  /** Connections at once from one address (MAX_CONNECTIONS_PER_IP; an IPv6 address by its /64). */
  maxConnectionsPerIp: number;
}

export const defaultHttpLimits: HttpLimits = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxHeadersCount: 100,
  maxConnections: 1_000,
  maxConnectionsPerIp: 100,
};

/**
 * How often Node looks for connections past their header or request timeout. Its default, 30 s,
 * let a 10 s header timeout cut slow connections only at 31 s: a client could hold each for three
 * times as long. Checked every second, the timeout holds within a second of its setting.
 */
const connectionsCheckingIntervalMs = 1_000;

export interface BoundServer {
  server: Server;
  /** The port really listened on (PORT=0 asks the system for one). */
  port: number;
  /** The connections held open, in all and by address. */
  connections: ConnectionLimiter;
  /** Hands requests to `listener`; until then they get 503 "starting" (/metrics excepted). */
  serve(listener: RequestListener): void;
  /**
   * Stops accepting, lets requests in flight finish (at most `graceMs`), then closes what is
   * left. Resolves when every connection is gone.
   */
  close(graceMs?: number): Promise<void>;
}

/** What /metrics serves: a prom-client Registry. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

/**
 * Until the service is ready to serve: alive (for liveness probes), not ready, its process
 * metrics when it has them (a scrape must not fail while the process is up: readiness is
 * /readyz's to say), nothing else.
 */
function answerWhileStarting(metrics: MetricsSource | undefined): RequestListener {
  return (request, response) => {
    const path = (request.url ?? "").split("?")[0];
    if (path === "/metrics" && metrics && request.method === "GET") {
      metrics.metrics().then(
        (text) => {
          response.writeHead(200, { "Content-Type": metrics.contentType });
          response.end(text);
        },
        () => {
          response.writeHead(500, { "Content-Type": "text/plain" });
          response.end("metrics could not be collected\n");
        },
      );
      return;
    }
    const [status, body] =
      path === "/healthz"
        ? [200, { status: "starting" }]
        : path === "/readyz"
          ? [503, { status: "not_ready", reason: "the service is starting" }]
          : [503, { status: "ERROR", code: "starting", message: "The service is starting; retry shortly." }];
    response.writeHead(status, { "Content-Type": "application/json", "Retry-After": "1" });
    response.end(JSON.stringify(body));
  };
}

/**
 * Binds the port before anything else happens, so that a process that cannot listen stops
 * before it has created or written anything. `metrics`, the registry the service will serve
 * (its process metrics at least), answers /metrics while it starts.
 */
export async function bindPort(
  port: number,
  host?: string,
  given: Partial<HttpLimits> & { metrics?: MetricsSource } = {},
): Promise<BoundServer> {
  const { metrics, ...limitsGiven } = given;
  const limits = { ...defaultHttpLimits, ...limitsGiven };
  let listener: RequestListener = answerWhileStarting(metrics);
  const server = createServer(
    {
      connectionsCheckingInterval: connectionsCheckingIntervalMs,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
    },
    (request, response) => listener(request, response),
  );
  server.maxHeadersCount = limits.maxHeadersCount;
  // Per address too, and at accept: one client holding every connection (issue 21: 1,000 slow
  // connections from one address left /healthz unanswered) gets its share, and a probe from it
  // gets in by taking the place of one that has waited a second without a request.
  const connections = limitHttpConnections(server, {
    total: limits.maxConnections,
    perAddress: limits.maxConnectionsPerIp,
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(new PortUnavailableError(port, error.code ?? error.message)),
    );
    server.listen(port, host, () => resolve());
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    connections,
    serve(next) {
      listener = next;
    },
    async close(graceMs = 8_000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections go once their request in flight is answered; stragglers at the end.
      const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
      const deadline = setTimeout(() => server.closeAllConnections(), graceMs);
      server.closeIdleConnections();
      await closed;
      clearInterval(idleSweep);
      clearTimeout(deadline);
    },
  };
}
