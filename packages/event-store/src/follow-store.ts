import type { EventStore, FromPosition, RecordedEvent, Subscription } from "./port.js";

export interface FollowOptions {
  store: EventStore;
  /** Where to (re)start: read afresh after every failure, so that a failed batch is retried. */
  from: () => Promise<FromPosition>;
  onBatch: (batch: RecordedEvent[]) => Promise<void>;
  onError?: (error: unknown) => void;
  maxBatch?: number;
  /** The first pause after a failure; each failure in a row doubles it, up to `maxRetryDelayMs`. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
}

export interface Follower {
  stop(): Promise<void>;
}

/**
 * The pause before attempt `failures + 1`: exponential, capped, with full jitter over its upper
 * half, so that processes that lost the database together do not all come back at one instant.
 */
export function backoffDelay(failures: number, firstMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, firstMs * 2 ** Math.max(0, failures - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/**
 * Follows the store on a catch-up subscription until stopped. A batch that fails is never
 * skipped: the subscription is reopened from `from()` (a checkpoint the handler moves) after a
 * pause that grows while failures follow each other (the database restarting, say), and the batch
 * comes again.
 */
export function followStore(options: FollowOptions): Follower {
  let stopped = false;
  let subscription: Subscription | null = null;
  let wake: (() => void) | null = null;
  let failures = 0;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const loop = async () => {
    while (!stopped) {
      try {
        const from = await options.from();
        // stop() may have come while `from()` was read: it closed the subscription there was
        // then, not this one, and a subscription that has caught up delivers no batch after
        // which the loop would see `stopped`; it would poll on and stop() wait for ever.
        if (stopped) break;
        subscription = options.store.subscribe(from, { maxBatch: options.maxBatch ?? 500 });
        for await (const batch of subscription) {
          await options.onBatch(batch);
          failures = 0;
          if (stopped) break;
        }
      } catch (error) {
        if (stopped) break;
        failures++;
        options.onError?.(error);
        await subscription?.close().catch(() => {});
        // A stop that came while the subscription closed found no pause to cut short.
        if (stopped) break;
        await pause(backoffDelay(failures, options.retryDelayMs ?? 1000, options.maxRetryDelayMs ?? 30_000));
      }
    }
  };
  const running = loop();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await subscription?.close().catch(() => {});
      await running;
    },
  };
}
