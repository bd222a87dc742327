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
 *
 * Each process takes a caller's allowance from the shared count in slices of 1% of it (one
 * request where the allowance is under 200, which keeps small limits exact): one upsert per
 * slice, not per request. One upsert per request on the caller's row made 200 clients of one key
 * queue on that row and on a commit each (issue 21's load run fell from 1,476 to 439 requests/s).
 * The price: a caller may get up to one slice less than its allowance near a window's end (a
 * slice that no longer fits is refused whole), or one slice per process more.
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
  return inSlices(limiter, options, sliceOf(options));
}

/** A process's slice of a caller's allowance: 1% of it, at least one request. */
export function sliceOf(options: RateLimitOptions): number {
  return Math.max(1, Math.floor(options.burst / 100));
}

/** Callers whose slices a process keeps before it forgets the expired ones. */
const slicesKept = 10_000;

function inSlices(limiter: RateLimiterAbstract, options: RateLimitOptions, slice: number): RateLimiter {
  if (slice === 1) return decide(limiter, options);
  const held = new Map<string, { left: number; remaining: number; until: number }>();
  // One slice asked for at a time per caller: 200 requests of one key arriving together would
  // otherwise each take a slice (200% of the allowance at once) and be refused.
  const asking = new Map<string, Promise<RateLimitDecision>>();
  const fromHeld = (caller: string, now: number): RateLimitDecision | null => {
    const mine = held.get(caller);
    if (!mine || mine.left <= 0 || mine.until <= now) return null;
    mine.left -= 1;
    return {
      allowed: true,
      limit: options.burst,
      remaining: mine.remaining + mine.left,
      resetSeconds: Math.max(1, Math.ceil((mine.until - now) / 1000)),
    };
  };
  const takeSlice = async (caller: string): Promise<RateLimitDecision> => {
    const now = Date.now();
    const { allowed, result } = await consumePoints(limiter, caller, slice);
    const resetSeconds = Math.max(1, Math.ceil(result.msBeforeNext / 1000));
    if (!allowed) {
      held.delete(caller);
      return { allowed: false, limit: options.burst, remaining: 0, resetSeconds };
    }
    if (held.size >= slicesKept) {
      for (const [key, entry] of held) if (entry.until <= now) held.delete(key);
    }
    // The asker's request is the slice's first.
    held.set(caller, {
      left: slice - 1,
      remaining: result.remainingPoints,
      until: now + result.msBeforeNext,
    });
    return {
      allowed: true,
      limit: options.burst,
      remaining: result.remainingPoints + slice - 1,
      resetSeconds,
    };
  };
  return {
    async consume(caller) {
      for (;;) {
        const ready = fromHeld(caller, Date.now());
        if (ready) return ready;
        const inFlight = asking.get(caller);
        if (inFlight) {
          const answer = await inFlight;
          // Refused: so is everyone who waited on the same slice.
          if (!answer.allowed) return answer;
          continue;
        }
        const asked = takeSlice(caller).finally(() => asking.delete(caller));
        asking.set(caller, asked);
        return await asked;
      }
    },
  };
}

async function consumePoints(
  limiter: RateLimiterAbstract,
  caller: string,
  points: number,
): Promise<{ allowed: boolean; result: RateLimiterRes }> {
  try {
    return { allowed: true, result: await limiter.consume(caller, points) };
  } catch (refusal) {
    if (!(refusal instanceof RateLimiterRes)) throw refusal;
    return { allowed: false, result: refusal };
  }
}

function decide(limiter: RateLimiterAbstract, options: RateLimitOptions): RateLimiter {
  return {
    async consume(caller) {
      const { allowed, result } = await consumePoints(limiter, caller, 1);
      return {
        allowed,
        limit: options.burst,
        remaining: result.remainingPoints,
        resetSeconds: Math.max(1, Math.ceil(result.msBeforeNext / 1000)),
      };
    },
  };
}
