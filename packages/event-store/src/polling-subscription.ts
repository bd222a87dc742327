import type { FromPosition, RecordedEvent, Subscription } from "./port.js";

export interface PollingSubscriptionOptions {
  /** Reads up to `limit` events after `from`; only settled events (see the adapter). */
  readPage(from: FromPosition, limit: number): Promise<RecordedEvent[]>;
  from: FromPosition;
  maxBatch: number;
  /** Pause between reads once caught up. */
  pollIntervalMs: number;
  /** Called once when the subscription ends, however it ends. */
  onEnd?: () => void;
}

/**
 * A catch-up subscription by polling: pages are read back to back until one comes back short
 * (caught up), then one read per interval. The checkpoint is the last delivered position, so every
 * event is delivered once and in order, provided readPage only returns a settled prefix.
 */
export function pollingSubscription(options: PollingSubscriptionOptions): Subscription {
  let closed = false;
  let started = false;
  let wake: (() => void) | null = null;
  let inFlight: Promise<unknown> | null = null;

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });

  const end = () => {
    if (closed) return;
    closed = true;
    wake?.();
    options.onEnd?.();
  };

  async function* run(): AsyncGenerator<RecordedEvent[]> {
    let checkpoint = options.from;
    try {
      while (!closed) {
        const reading = options.readPage(checkpoint, options.maxBatch);
        inFlight = reading;
        const page = await reading.finally(() => {
          inFlight = null;
        });
        if (closed) return;
        if (page.length > 0) {
          checkpoint = page[page.length - 1]!.position;
          yield page;
        }
        if (page.length < options.maxBatch && !closed) await pause(options.pollIntervalMs);
      }
    } finally {
      end();
    }
  }

  const iterator = run();
  return {
    [Symbol.asyncIterator]() {
      // One consumer: a second loop over the same subscription would steal its batches.
      if (started) throw new Error("a subscription can be iterated only once");
      started = true;
      return iterator;
    },
    async close() {
      end();
      // Let a read already sent finish, so that the caller may close the database right after.
      await inFlight?.catch(() => undefined);
    },
  };
}
