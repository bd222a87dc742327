import { setTimeout as sleep } from "node:timers/promises";
import { backoffDelay, type EventStore } from "@dmarc-ledger/event-store";
import type { DataKeys } from "@dmarc-ledger/personal-data";
import { personalDataPolicy } from "@dmarc-ledger/personal-data";
import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { type Kysely, sql } from "kysely";
import { type FeedEvent, toFeedEvents } from "./cloud-event.js";
import { readFeedEvents } from "./read-feed.js";
import type { EventFeedSchema } from "./schema.js";
import type { EventBrokerSettings } from "./settings.js";

const nanosPerSecond = 1_000_000_000;
/**
 * The stream's limits when this process creates it: events older than 30 days or past 8 GiB
 * are dropped oldest first (the feed keeps them all: a consumer that fell behind reads it), and
 * an event id seen within 10 minutes is dropped as a duplicate (a publisher resumed after a crash
 * sends again what it had not checkpointed).
 */
export const streamLimits = {
  maxAgeSeconds: 30 * 86_400,
  maxBytes: 8 * 1024 ** 3,
  duplicateWindowSeconds: 600,
  maxMessageBytes: 8 * 1024 ** 2,
};

export interface NatsPublisherOptions {
  db: Kysely<EventFeedSchema>;
  store: EventStore;
  settings: EventBrokerSettings;
  /** The CloudEvents `source`: this region's API root. */
  source: string;
  keys?: DataKeys | undefined;
  /** Events published a page, in order (each acknowledged before the checkpoint moves). */
  pageSize?: number;
  /** Pause once caught up. */
  pollMs?: number;
  onError?: (error: unknown) => void;
  /** After each page is acknowledged, with the events it held (for tests and metrics). */
  onPublished?: (events: readonly FeedEvent[]) => void;
}

export interface RunningNatsPublisher {
  stop(): Promise<void>;
}

/** The checkpoint row: one per stream, so that two streams could be fed from one database. */
const checkpointName = (settings: EventBrokerSettings) => `nats:${settings.stream}`;

/**
 * Publishes every event of the feed's index, in the global order, to NATS JetStream: subject
 * `<prefix>.<tenant>.<type>`, the event's id as `Nats-Msg-Id`, the CloudEvent (as GET events
 * shows it to the tenant) as the payload. From a checkpoint moved after each page's
 * acknowledgements: after a crash the page comes again (at least once; the stream drops the ids
 * it saw within its duplicate window). The stream is created with streamLimits when missing.
 */
export function startNatsPublisher(options: NatsPublisherOptions): RunningNatsPublisher {
  const { db, settings } = options;
  const pageSize = options.pageSize ?? 500;
  const pollMs = options.pollMs ?? 200;
  let stopped = false;
  let connection: NatsConnection | null = null;
  const stopping = new AbortController();

  const pause = (ms: number) => sleep(ms, undefined, { signal: stopping.signal }).catch(() => undefined);

  async function open(): Promise<NatsConnection> {
    const nc = await connect({
      servers: settings.url,
      name: "dmarc-ledger events publisher",
      maxReconnectAttempts: -1,
      timeout: 5000,
    });
    await ensureStream(nc, settings);
    return nc;
  }

  async function publishPage(nc: NatsConnection): Promise<number> {
    const after = await readCheckpoint(db, checkpointName(settings));
    const { rows } = await sql<{ tenant_id: string; position: string }>`
      select tenant_id, position::text as position from feed_entry
      where ${after === null ? sql`true` : sql`position > ${after.toString()}::numeric`}
      order by feed_entry.position limit ${pageSize}`.execute(db);
    if (rows.length === 0) return 0;
    const tenantOf = new Map(rows.map((row) => [BigInt(row.position), row.tenant_id]));
    const recorded = await readFeedEvents(options.store, [...tenantOf.keys()]);
    const js = jetstream(nc);
    const acks: Promise<unknown>[] = [];
    const published: FeedEvent[] = [];
    const redaction = new Map<string, boolean>();
    // In the global order, each shown as its tenant's feed shows it.
    for (const event of recorded) {
      const tenantId = tenantOf.get(event.position)!;
      if (!redaction.has(tenantId))
        redaction.set(tenantId, (await personalDataPolicy(db, tenantId)).redaction);
      const [shown] = await toFeedEvents([event], {
        source: options.source,
        tenantId,
        keys: options.keys,
        keysHandle: db,
        redact: redaction.get(tenantId)!,
      });
      if (!shown) continue;
      published.push(shown);
      acks.push(
        js.publish(`${settings.subjectPrefix}.${tenantId}.${shown.type}`, JSON.stringify(shown), {
          msgID: shown.id,
        }),
      );
    }
    await Promise.all(acks);
    const last = recorded.at(-1)?.position ?? BigInt(rows.at(-1)!.position);
    await writeCheckpoint(db, checkpointName(settings), last);
    options.onPublished?.(published);
    return rows.length;
  }

  const running = (async () => {
    let failures = 0;
    while (!stopped) {
      try {
        connection ??= await open();
        const count = await publishPage(connection);
        failures = 0;
        if (count < pageSize) await pause(pollMs);
      } catch (error) {
        if (stopped) break;
        failures++;
        options.onError?.(error);
        await connection?.close().catch(() => undefined);
        connection = null;
        await pause(backoffDelay(failures, 1000, 30_000));
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      stopping.abort();
      await running;
      await connection?.drain().catch(() => undefined);
      connection = null;
    },
  };
}

async function ensureStream(nc: NatsConnection, settings: EventBrokerSettings): Promise<void> {
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.streams.info(settings.stream);
  } catch (error) {
    if (!(error instanceof JetStreamApiError) || error.code !== JetStreamApiCodes.StreamNotFound) throw error;
    await jsm.streams.add({
      name: settings.stream,
      subjects: [`${settings.subjectPrefix}.>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_age: streamLimits.maxAgeSeconds * nanosPerSecond,
      max_bytes: streamLimits.maxBytes,
      max_msg_size: streamLimits.maxMessageBytes,
      duplicate_window: streamLimits.duplicateWindowSeconds * nanosPerSecond,
    });
  }
}

async function readCheckpoint(db: Kysely<EventFeedSchema>, name: string): Promise<bigint | null> {
  const row = await db
    .selectFrom("feed_publisher_checkpoint")
    .select(sql<string>`position::text`.as("position"))
    .where("name", "=", name)
    .executeTakeFirst();
  return row ? BigInt(row.position) : null;
}

async function writeCheckpoint(db: Kysely<EventFeedSchema>, name: string, position: bigint): Promise<void> {
  await db
    .insertInto("feed_publisher_checkpoint")
    .values({ name, position: position.toString() })
    .onConflict((oc) => oc.column("name").doUpdateSet({ position: position.toString() }))
    .execute();
}
