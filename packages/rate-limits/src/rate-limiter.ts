import type { AnySchema } from "@dmarc-ledger/db";
import { CompiledQuery, type Kysely } from "kysely";
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
} from "rate-limiter-flexible";

export interface RateLimitOptions {
  /** Requests per second a caller may make on average. */
  perSecond: number;
  /** Requests a caller may make at once: the window's allowance. */
  burst: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** The window's allowance. */
  limit: number;
  /** Requests left in the window. */
  remaining: number;
  /** Seconds until the window starts over. */
  resetSeconds: number;
}

/** Counts a caller's requests; answers whether this one is allowed. */
export interface RateLimiter {
  consume(caller: string): Promise<RateLimitDecision>;
}

/**
 * Windows of `burst / perSecond` seconds, each allowing `burst` requests: the same long-run rate
 * and burst as a token bucket, in a form one upsert per request keeps in a table.
 */
function windowOf(options: RateLimitOptions) {
  return { points: options.burst, duration: Math.max(1, Math.ceil(options.burst / options.perSecond)) };
}

/** One process's limiter: embedded mode, where one process answers every request. */
export function processRateLimiter(options: RateLimitOptions): RateLimiter {
  return decide(new RateLimiterMemory({ ...windowOf(options), keyPrefix: "api" }), options);
}

/**
 * The deployment's limiter: the counts live in `rate_limit` on the primary, so that a caller who
 * spreads requests over several API processes gets the limit once, not once per process
 * (rate-limiter-flexible's RateLimiterPostgres, on the process's own connections through
 * Kysely). A process that refused a caller refuses it again from memory for one window's length
 * (a flood costs the database nothing; the block may outlast the shared window by up to that
 * much); when the database cannot be reached, each process counts alone.
 */
export function sharedRateLimiter(db: Kysely<AnySchema>, options: RateLimitOptions): RateLimiter {
  const window = windowOf(options);
  const limiter = new RateLimiterPostgres({
    ...window,
    storeClient: {
      // The one method it calls, answered by Kysely's pool (or transaction-less PGlite).
      query: (query: { text: string; values?: unknown[] }) =>
        db.executeQuery(CompiledQuery.raw(query.text, query.values ?? [])),
    },
    storeType: "pool",
    tableName: "rate_limit",
    tableCreated: true,
    keyPrefix: "api",
    inMemoryBlockOnConsumed: window.points,
    inMemoryBlockDuration: window.duration,
    insuranceLimiter: new RateLimiterMemory({ ...window, keyPrefix: "api" }),
  });
  return decide(limiter, options);
}

function decide(limiter: RateLimiterAbstract, options: RateLimitOptions): RateLimiter {
  return {
    async consume(caller) {
      let result: RateLimiterRes;
      let allowed = true;
      try {
        result = await limiter.consume(caller);
      } catch (refusal) {
        if (!(refusal instanceof RateLimiterRes)) throw refusal;
        result = refusal;
        allowed = false;
      }
      return {
        allowed,
        limit: options.burst,
        remaining: result.remainingPoints,
        resetSeconds: Math.max(1, Math.ceil(result.msBeforeNext / 1000)),
      };
    },
  };
}
