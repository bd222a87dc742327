import { randomUUID } from "node:crypto";
import { type Database, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, openTestPglite } from "@dmarc-ledger/db/testing";
import type { EventStore, FromPosition, RecordedEvent, Subscription } from "../src/index.js";

/** Streams unique to one test, so that tests sharing a store never read each other's events. */
export function uniqueStream(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * On PostgreSQL an event reaches readAll only once every older transaction on the server has
 * ended (see src/postgres/global-order.ts); other tests' transactions may delay that briefly.
 */
export async function waitForHead(store: EventStore, position: bigint, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const head = await store.headPosition();
    if (head !== null && head >= position) return;
    if (Date.now() > deadline) throw new Error(`head ${head} did not reach ${position} in ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** Every event after `from` of the streams accepted by `keep`, paging readAll by `pageSize`. */
export async function readAllPaged(
  store: EventStore,
  from: FromPosition,
  pageSize: number,
  keep: (event: RecordedEvent) => boolean,
): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  let after = from;
  for (;;) {
    const page = await store.readAll(after, pageSize);
    if (page.length === 0) return events;
    events.push(...page.filter(keep));
    after = page[page.length - 1]!.position;
  }
}

export interface Collector {
  events: RecordedEvent[];
  batchSizes: number[];
  /** Resolves when `done(events)` holds; rejects after the timeout or when iteration fails. */
  until(done: (events: RecordedEvent[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves when the for-await loop has ended. */
  finished: Promise<void>;
}

/** Runs the subscription in the background, keeping the events accepted by `keep`. */
export function collect(subscription: Subscription, keep: (event: RecordedEvent) => boolean): Collector {
  const events: RecordedEvent[] = [];
  const batchSizes: number[] = [];
  let failure: unknown = null;
  const finished = (async () => {
    try {
      for await (const batch of subscription) {
        batchSizes.push(batch.length);
        events.push(...batch.filter(keep));
      }
    } catch (error) {
      failure = error;
    }
  })();
  return {
    events,
    batchSizes,
    finished,
    async until(done, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done(events)) {
        if (failure) throw failure;
        if (Date.now() > deadline)
          throw new Error(`subscription delivered ${events.length} events, timed out`);
        await sleep(10);
      }
    },
  };
}

export function expectStrictlyIncreasing(positions: bigint[]): void {
  for (let i = 1; i < positions.length; i++) {
    if (!(positions[i]! > positions[i - 1]!)) {
      throw new Error(`position ${positions[i]} at index ${i} does not follow ${positions[i - 1]}`);
    }
  }
}

/** The databases the PostgreSQL adapter runs on, for `describe.each`: a server, and PGlite. */
export const adapterDatabases = [
  ["PostgreSQL", true],
  ["PGlite", false],
] as const;

/** A fresh database of the test's own on the server (`server`), or an in-memory PGlite; `close` ends it. */
export async function openAdapterDatabase(
  server: boolean,
  prefix: string,
): Promise<{ database: Database; close(): Promise<void> }> {
  if (!server) {
    const database = await openTestPglite();
    return { database, close: () => database.close() };
  }
  const testDatabase = await createTestDatabase(prefix);
  const database = await openDatabase({ kind: "postgres", url: testDatabase.url });
  return {
    database,
    close: async () => {
      await database.close();
      await testDatabase.drop();
    },
  };
}
