import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";

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
const limits = {
  requestTimeout: 30_000,
  headersTimeout: 10_000,
  keepAliveTimeout: 5_000,
  maxHeadersCount: 100,
  maxConnections: 1_000,
};

export interface BoundServer {
  server: Server;
  /** The port really listened on (PORT=0 asks the system for one). */
  port: number;
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
  options: { metrics?: MetricsSource } = {},
): Promise<BoundServer> {
  let listener: RequestListener = answerWhileStarting(options.metrics);
  const server = createServer((request, response) => listener(request, response));
  Object.assign(server, limits);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(new PortUnavailableError(port, error.code ?? error.message)),
    );
    server.listen(port, host, () => resolve());
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
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
