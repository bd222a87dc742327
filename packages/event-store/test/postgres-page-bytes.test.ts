import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresEventStore, type PostgresEventStore, type RecordedEvent } from "../src/index.js";
import { adapterDatabases, openAdapterDatabase } from "./helpers.js";

/**
 * Pages of the global order are bounded by the bytes of their documents, not only by a count:
 * a projector reading 500 report chunks of 1 MiB at once held 1.4 GB (issue 14).
 */
describe.each(adapterDatabases)("PostgreSQL adapter on %s: pages bounded by bytes", (_name, server) => {
  let opened: Awaited<ReturnType<typeof openAdapterDatabase>> | undefined;
  let store: PostgresEventStore;
  const kib = (n: number) => "x".repeat(n * 1024);

  beforeAll(async () => {
    opened = await openAdapterDatabase(server, "dl_event_store_page_bytes");
    store = await openPostgresEventStore(opened.database, { maxPageBytes: 100 * 1024, pollIntervalMs: 5 });
    for (let i = 0; i < 10; i++) {
      await store.append(`big-${i}`, [{ type: "Big", data: { i, padding: kib(30) } }], "no_stream");
    }
    await store.append("small", [{ type: "Small", data: { i: 10 } }], "no_stream");
  });
  afterAll(async () => {
    await store?.close();
    await opened?.close();
  });

  const indexes = (events: RecordedEvent[]) => events.map((event) => (event.data as { i: number }).i);

  it("readAll ends a page with the event that passes the byte limit, and goes on from there", async () => {
    const first = await store.readAll("start", 500);
    expect(indexes(first)).toEqual([0, 1, 2, 3]);
    const second = await store.readAll(first.at(-1)!.position, 500);
    expect(indexes(second)).toEqual([4, 5, 6, 7]);
    const rest = await store.readAll(second.at(-1)!.position, 500);
    expect(indexes(rest)).toEqual([8, 9, 10]);
  });

  it("an event larger than the limit still comes", async () => {
    await store.append("huge", [{ type: "Big", data: { i: 11, padding: kib(300) } }], "no_stream");
    await store.append("after-huge", [{ type: "Small", data: { i: 12 } }], "no_stream");
    const all: number[] = [];
    const pages: number[] = [];
    let from: "start" | bigint = "start";
    for (;;) {
      const page = await store.readAll(from, 500);
      if (page.length === 0) break;
      pages.push(page.length);
      all.push(...indexes(page));
      from = page.at(-1)!.position;
    }
    expect(all).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    // The event that crosses the limit ends its page: 8, 9, 10 and then the 300 KiB one.
    expect(pages).toEqual([4, 4, 4, 1]);
  });

  it("a subscription delivers every event once in byte-bounded batches", async () => {
    const subscription = store.subscribe("start", { maxBatch: 500 });
    const seen: number[] = [];
    for await (const batch of subscription) {
      const beforeLast = batch
        .slice(0, -1)
        .reduce((sum, event) => sum + JSON.stringify(event.data).length, 0);
      expect(beforeLast).toBeLessThan(100 * 1024);
      seen.push(...indexes(batch));
      if (seen.length >= 13) break;
    }
    await subscription.close();
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });
});
