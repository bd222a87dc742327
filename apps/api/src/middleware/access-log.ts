import type { Next } from "koa";
import type { Histogram } from "prom-client";
import type { ApiContext } from "../state.js";

/**
 * One JSON line per request, when it is answered, and its latency in the histogram. A small Koa
 * middleware rather than pino-http: the fields wanted (route template, tenant id) are known only
 * to Koa's router and our authentication, after pino-http would have taken its snapshot of the
 * raw request; and nothing of the request's headers is logged, so no key can leak through them.
 */
export function accessLog(
  knownPaths: ReadonlySet<string>,
  httpRequestDuration?: Histogram<"method" | "route" | "status">,
) {
  return async function accessLogMiddleware(ctx: ApiContext, next: Next): Promise<void> {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // A known path (requests refused before routing have no matched route), never any other:
      // labels must stay few, whatever paths clients make up.
      const matched = (ctx as { _matchedRoute?: string })._matchedRoute;
      const route = matched ?? (knownPaths.has(ctx.path) ? ctx.path : "(unrouted)");
      httpRequestDuration?.observe({ method: ctx.method, route, status: String(ctx.status) }, seconds);
      ctx.deps.logger.info(
        {
          requestId: ctx.state.requestId,
          tenantId: ctx.state.holder?.tenantId ?? null,
          method: ctx.method,
          route,
          status: ctx.status,
          durationMs: Math.round(seconds * 1e6) / 1e3,
        },
        "request",
      );
    }
  };
}
