import {
  type AllStreamResolvedEvent,
  excludeSystemEvents,
  type KurrentDBClient,
  START,
} from "@kurrent/kurrentdb-client";
import type { FromPosition, RecordedEvent, Subscription } from "../port.js";
import { toRecordedEvent } from "./events.js";
import { unpackPosition } from "./position.js";

export interface KurrentDbSubscriptionOptions {
  from: FromPosition;
  maxBatch: number;
  onEnd?: () => void;
}

/**
 * subscribeToAll (catch-up, then live; from a position it starts after it) without system events,
 * its events buffered and handed out in batches of whatever has arrived, up to maxBatch. The
 * stream is paused while the buffer is full, so a slow consumer holds back the server, not memory.
 */
export function kurrentDbSubscription(
  client: KurrentDBClient,
  options: KurrentDbSubscriptionOptions,
): Subscription {
  const source = client.subscribeToAll({
    fromPosition: options.from === "start" ? START : unpackPosition(options.from),
    filter: excludeSystemEvents(),
    resolveLinkTos: false,
  });
  const highWater = options.maxBatch * 4;
  const buffer: RecordedEvent[] = [];
  let failure: Error | null = null;
  let ended = false;
  let closed = false;
  let started = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };

  source.on("data", (resolved: AllStreamResolvedEvent) => {
    try {
      const event = toRecordedEvent(resolved);
      if (event) buffer.push(event);
    } catch (error) {
      failure = error as Error;
    }
    if (buffer.length >= highWater) source.pause();
    notify();
  });
  source.on("error", (error: Error) => {
    // Unsubscribing cancels the call; that error is the end we asked for.
    if (!closed) failure = error;
    notify();
  });
  source.on("end", () => {
    ended = true;
    notify();
  });
  source.on("close", () => {
    ended = true;
    notify();
  });

  let ending: Promise<void> | null = null;
  const end = () => {
    closed = true;
    notify();
    ending ??= source
      .unsubscribe()
      .catch(() => undefined)
      .finally(() => options.onEnd?.());
    return ending;
  };

  async function* run(): AsyncGenerator<RecordedEvent[]> {
    try {
      while (!closed) {
        if (buffer.length > 0) {
          const batch = buffer.splice(0, options.maxBatch);
          if (source.isPaused() && buffer.length < highWater) source.resume();
          yield batch;
          continue;
        }
        if (failure) throw failure;
        // The port's subscription runs until closed: an end we did not ask for is a failure.
        if (ended) throw new Error("KurrentDB ended the $all subscription");
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    } finally {
      await end();
    }
  }

  const iterator = run();
  return {
    [Symbol.asyncIterator]() {
      if (started) throw new Error("a subscription can be iterated only once");
      started = true;
      return iterator;
    },
    close: end,
  };
}
