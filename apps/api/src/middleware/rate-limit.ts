import type { Next } from "koa";
import { ApiError } from "../api-error.js";
import type { ApiContext } from "../state.js";

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/**
 * A token bucket per key or signed-in person (per client address for requests without a valid key, so that guessing
 * keys is limited too). The RateLimit-* headers go out on every response.
 */
export function rateLimit(options: { perSecond: number; burst: number }, now: () => number = Date.now) {
  const buckets = new Map<string, Bucket>();
  return async function rateLimitMiddleware(ctx: ApiContext, next: Next): Promise<void> {
    const id = ctx.state.holder?.causedBy ?? `ip:${ctx.ip}`;
    const at = now();
    const bucket = buckets.get(id) ?? { tokens: options.burst, updatedMs: at };
    bucket.tokens = Math.min(
      options.burst,
      bucket.tokens + ((at - bucket.updatedMs) / 1000) * options.perSecond,
    );
    bucket.updatedMs = at;
    buckets.set(id, bucket);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    const secondsToFull = Math.ceil((options.burst - bucket.tokens) / options.perSecond);
    ctx.set("RateLimit-Limit", String(options.burst));
    ctx.set("RateLimit-Remaining", String(Math.floor(bucket.tokens)));
    ctx.set("RateLimit-Reset", String(secondsToFull));
    if (!allowed) {
      const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / options.perSecond));
      throw new ApiError(429, "rate_limited", `Too many requests; retry in ${retryAfter} s.`, {
        "Retry-After": String(retryAfter),
      });
    }
    if (buckets.size > 100_000) evictFull(buckets, options, at);
    await next();
  };
}

function evictFull(buckets: Map<string, Bucket>, options: { perSecond: number; burst: number }, at: number) {
  for (const [id, bucket] of buckets) {
    if (bucket.tokens + ((at - bucket.updatedMs) / 1000) * options.perSecond >= options.burst)
      buckets.delete(id);
  }
}
