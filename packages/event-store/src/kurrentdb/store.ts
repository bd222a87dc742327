import { randomUUID } from "node:crypto";
import {
  ANY,
  type AppendStreamState,
  BACKWARDS,
  END,
  excludeSystemEvents,
  FORWARDS,
  type JSONType,
  jsonEvent,
  KurrentDBClient,
  WrongExpectedVersionError as KurrentWrongExpectedVersionError,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
} from "@kurrent/kurrentdb-client";
import {
  type EventStore,
  type ExpectedRevision,
  type RecordedEvent,
  type Subscription,
  WrongExpectedVersionError,
} from "../port.js";
import { assertAppendable, assertLimit } from "../validate.js";
import { toRecordedEvent } from "./events.js";
import { packPosition, unpackPosition } from "./position.js";
import { kurrentDbSubscription } from "./subscription.js";

export interface KurrentDbEventStoreOptions {
  /** Batch size of subscriptions that give none. */
  defaultMaxBatch?: number;
}

/**
 * The event store on KurrentDB (`kurrentdb://host:2113?tls=false`). KurrentDB's log is already one
 * global order that only grows at its end, so no late-commit guard is needed here. The store owns
 * its client: close() ends subscriptions and disposes it.
 */
export function createKurrentDbEventStore(
  connectionString: string,
  options: KurrentDbEventStoreOptions = {},
): EventStore {
  const client = KurrentDBClient.connectionString(connectionString);
  const defaultMaxBatch = options.defaultMaxBatch ?? 500;
  const open = new Set<Subscription>();

  return {
    async append(stream, events, expected) {
      assertAppendable(stream, events);
      const data = events.map((event) =>
        jsonEvent({
          id: event.id ?? randomUUID(),
          type: event.type,
          // The client JSON-encodes any value; its JSONType is narrower than our unknown.
          data: (event.data ?? null) as JSONType,
          metadata: (event.metadata ?? {}) as JSONType,
        }),
      );
      try {
        const result = await client.appendToStream(stream, data, { streamState: toStreamState(expected) });
        if (!result.position) throw new Error("KurrentDB returned no position: the server is too old");
        return { nextRevision: result.nextExpectedRevision, position: packPosition(result.position) };
      } catch (error) {
        if (error instanceof KurrentWrongExpectedVersionError) {
          const actual = error.actualState === NO_STREAM ? null : error.actualState;
          throw new WrongExpectedVersionError(stream, expected, actual);
        }
        throw error;
      }
    },

    async readStream(stream, readOptions = {}) {
      if (readOptions.limit !== undefined) assertLimit(readOptions.limit);
      const events: RecordedEvent[] = [];
      try {
        for await (const resolved of client.readStream(stream, {
          direction: FORWARDS,
          fromRevision: readOptions.fromRevision ?? START,
          maxCount: readOptions.limit ?? Number.MAX_SAFE_INTEGER,
        })) {
          const event = toRecordedEvent(resolved);
          if (event) events.push(event);
        }
      } catch (error) {
        if (error instanceof StreamNotFoundError) return [];
        throw error;
      }
      return events;
    },

    async readAll(from, limit) {
      assertLimit(limit);
      // readAll starts AT a position (inclusive); ours starts after it, so read one more and
      // drop the event at `from` itself.
      const events: RecordedEvent[] = [];
      for await (const resolved of client.readAll({
        direction: FORWARDS,
        fromPosition: from === "start" ? START : unpackPosition(from),
        maxCount: from === "start" ? limit : limit + 1,
        filter: excludeSystemEvents(),
        resolveLinkTos: false,
      })) {
        const event = toRecordedEvent(resolved);
        if (!event || (from !== "start" && event.position <= from)) continue;
        events.push(event);
        if (events.length === limit) break;
      }
      return events;
    },

    async headPosition() {
      for await (const resolved of client.readAll({
        direction: BACKWARDS,
        fromPosition: END,
        // A few more than one: the type filter runs on the server, the stream-name check here.
        maxCount: 100,
        filter: excludeSystemEvents(),
      })) {
        const event = toRecordedEvent(resolved);
        if (event) return event.position;
      }
      return null;
    },

    subscribe(from, subscribeOptions = {}) {
      const maxBatch = subscribeOptions.maxBatch ?? defaultMaxBatch;
      assertLimit(maxBatch);
      const subscription = kurrentDbSubscription(client, {
        from,
        maxBatch,
        onEnd: () => open.delete(subscription),
      });
      open.add(subscription);
      return subscription;
    },

    async close() {
      await Promise.all([...open].map((subscription) => subscription.close()));
      await client.dispose();
    },
  };
}

function toStreamState(expected: ExpectedRevision): AppendStreamState {
  switch (expected) {
    case "any":
      return ANY;
    case "no_stream":
      return NO_STREAM;
    case "stream_exists":
      return STREAM_EXISTS;
    default:
      return expected;
  }
}
