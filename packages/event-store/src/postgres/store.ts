import { type Database, migrateToLatest } from "@dmarc-ledger/db";
import type { QueryExecutorProvider, Transaction } from "kysely";
import { pollingSubscription } from "../polling-subscription.js";
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadStreamOptions,
  RecordedEvent,
  Subscription,
  WrongExpectedVersionError,
} from "../port.js";
import { assertAppendable, assertLimit } from "../validate.js";
import {
  appendNewStreamsWithin,
  appendWithin,
  type KnownTransactionState,
  type NewStreamAppend,
} from "./append.js";
import { eventStoreMigrations } from "./migrations/index.js";
import { defaultMaxPageBytes, headPosition, readAll, readAt, readStream } from "./read.js";

export interface PostgresEventStoreOptions {
  /** Pause between reads of a caught-up subscription. */
  pollIntervalMs?: number;
  /** Batch size of subscriptions that give none. */
  defaultMaxBatch?: number;
  /** Ceiling on the JSON bytes of one readAll page or subscription batch (at least one event). Default 8 MiB. */
  maxPageBytes?: number;
}

export interface AppendWithinOptions {
  /**
   * What the caller knows of its transaction, to spare round trips: "fresh" when nothing was
   * written in it before this append; "locked" when an earlier append of it returned or failed
   * with WrongExpectedVersionError (both come after the append lock is taken). Saying so when it
   * is not true breaks the global order (global-order.ts): only for callers that track it.
   */
  transaction?: KnownTransactionState;
}

export interface PostgresEventStore extends EventStore {
  /**
   * Appends inside the caller's transaction on the same database: for writes that must commit
   * with other rows, and for tests that hold a transaction open. May throw
   * AppendNotFirstError if the transaction wrote something before (see append.ts).
   */
  appendWithin<Schema>(
    trx: Transaction<Schema>,
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
    options?: AppendWithinOptions,
  ): Promise<AppendResult>;
  /**
   * Several new streams with their first events, in one statement inside the caller's
   * transaction (appendNewStreamsWithin in append.ts): each result is the append's, or the
   * WrongExpectedVersionError of a stream that exists.
   */
  appendNewStreamsWithin<Schema>(
    trx: Transaction<Schema>,
    appends: readonly NewStreamAppend[],
    options?: AppendWithinOptions,
  ): Promise<(AppendResult | WrongExpectedVersionError)[]>;
  /** readStream inside the caller's transaction, which sees that transaction's own appends. */
  readStreamWithin<Schema>(
    trx: Transaction<Schema>,
    stream: string,
    options?: ReadStreamOptions,
  ): Promise<RecordedEvent[]>;
  /**
   * Whether `db` is the handle this store keeps its events through, so that a transaction of
   * `db` can take appendWithin (PGlite has one connection: a transaction of another handle on
   * the same files would wait for the store forever).
   */
  holdsEventsIn(db: object): boolean;
}

/**
 * The event store on the caller's database (pg pool or PGlite), whose tables
 * `eventStoreMigrations` created. close() ends the store's subscriptions; the database stays the
 * caller's to close.
 */
export function createPostgresEventStore(
  database: Database,
  options: PostgresEventStoreOptions = {},
): PostgresEventStore {
  const db: QueryExecutorProvider & Pick<Database["db"], "transaction"> = database.db;
  const pollIntervalMs = options.pollIntervalMs ?? 50;
  const defaultMaxBatch = options.defaultMaxBatch ?? 500;
  const maxPageBytes = options.maxPageBytes ?? defaultMaxPageBytes;
  const open = new Set<Subscription>();

  return {
    async append(stream, events, expected) {
      assertAppendable(stream, events);
      // Our own transaction, with nothing written before the append: no need to check for that.
      return db.transaction().execute((trx) => appendWithin(trx, stream, events, expected, "fresh"));
    },
    appendWithin: (trx, stream, events, expected, appendOptions) =>
      appendWithin(trx, stream, events, expected, appendOptions?.transaction ?? "unknown"),
    appendNewStreamsWithin: (trx, appends, appendOptions) =>
      appendNewStreamsWithin(trx, appends, appendOptions?.transaction ?? "unknown"),
    readStreamWithin: (trx, stream, readOptions) => readStream(trx, stream, readOptions),
    holdsEventsIn: (other) => other === database.db,
    readStream: (stream, readOptions) => readStream(db, stream, readOptions),
    readAll: (from, limit) => readAll(db, from, limit, maxPageBytes),
    headPosition: () => headPosition(db),
    readAt: (positions) => readAt(db, positions),
    subscribe(from, subscribeOptions = {}) {
      const maxBatch = subscribeOptions.maxBatch ?? defaultMaxBatch;
      assertLimit(maxBatch);
      const subscription = pollingSubscription({
        readPage: (after, limit) => readAll(db, after, limit, maxPageBytes),
        from,
        maxBatch,
        pollIntervalMs,
        onEnd: () => open.delete(subscription),
      });
      open.add(subscription);
      return subscription;
    },
    async close() {
      await Promise.all([...open].map((subscription) => subscription.close()));
    },
  };
}

/** Migrates the event store's tables to the latest version, then returns the store. */
export async function openPostgresEventStore(
  database: Database,
  options: PostgresEventStoreOptions = {},
): Promise<PostgresEventStore> {
  await migrateToLatest(database.db, eventStoreMigrations);
  return createPostgresEventStore(database, options);
}
