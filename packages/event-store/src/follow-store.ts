import type { EventStore, FromPosition, RecordedEvent, Subscription } from "./port.js";

export interface FollowOptions {
  store: EventStore;
  /** Where to (re)start: read afresh after every failure, so that a failed batch is retried. */
  from: () => Promise<FromPosition>;
  onBatch: (batch: RecordedEvent[]) => Promise<void>;
  onError?: (error: unknown) => void;
  maxBatch?: number;
  retryDelayMs?: number;
}

export interface Follower {
  stop(): Promise<void>;
}

/**
 * Follows the store on a catch-up subscription until stopped. A batch that fails is never
 * skipped: the subscription is reopened from `from()` (a checkpoint the handler moves) after a
 * pause, and the batch comes again.
 */
export function followStore(options: FollowOptions): Follower {
  let stopped = false;
  let subscription: Subscription | null = null;
  const loop = async () => {
    while (!stopped) {
      try {
        subscription = options.store.subscribe(await options.from(), { maxBatch: options.maxBatch ?? 500 });
        for await (const batch of subscription) {
          await options.onBatch(batch);
          if (stopped) break;
        }
      } catch (error) {
        if (stopped) break;
        options.onError?.(error);
        await subscription?.close().catch(() => {});
        await new Promise((resolve) => setTimeout(resolve, options.retryDelayMs ?? 1000));
      }
    }
  };
  const running = loop();
  return {
    async stop() {
      stopped = true;
      await subscription?.close();
      await running;
    },
  };
}
