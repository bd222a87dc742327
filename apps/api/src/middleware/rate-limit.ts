import type { RateLimiter } from "@dmarc-ledger/rate-limits";
import type { Next } from "koa";
import { ApiError } from "../api-error.js";
import type { ApiContext } from "../state.js";

/**
 * Limits each key or signed-in person (each client address for requests without a valid key, so
 * that guessing keys is limited too) through `limiter`: the deployment's, shared by its API
 * processes through the database, or one process's in embedded mode. The RateLimit-* headers go
 * out on every response.
 */
export function rateLimit(limiter: RateLimiter) {
  return async function rateLimitMiddleware(ctx: ApiContext, next: Next): Promise<void> {
    const id = ctx.state.holder?.causedBy ?? `ip:${ctx.ip}`;
    const decision = await limiter.consume(id);
    ctx.set("RateLimit-Limit", String(decision.limit));
    ctx.set("RateLimit-Remaining", String(decision.remaining));
    ctx.set("RateLimit-Reset", String(decision.resetSeconds));
    if (!decision.allowed) {
      throw new ApiError(429, "rate_limited", `Too many requests; retry in ${decision.resetSeconds} s.`, {
        "Retry-After": String(decision.resetSeconds),
      });
    }
    await next();
  };
}
