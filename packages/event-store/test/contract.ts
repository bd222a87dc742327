import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type EventStore,
  type ExpectedRevision,
  type RecordedEvent,
  WrongExpectedVersionError,
} from "../src/index.js";
import {
  collect,
  expectStrictlyIncreasing,
  readAllPaged,
  sleep,
  uniqueStream,
  waitForHead,
} from "./helpers.js";

export interface ContractSubject {
  store: EventStore;
  cleanup(): Promise<void>;
}

export interface ContractOptions {
  /** Skips the whole suite (say why where it is called). */
  skip?: boolean;
}

/**
 * The behaviour every EventStore adapter must show. One store serves the whole suite, so each
 * test uses its own streams and reads the global order from the head it saw when it began.
 */
export function describeEventStoreContract(
  name: string,
  factory: () => Promise<ContractSubject>,
  options: ContractOptions = {},
): void {
  describe.skipIf(options.skip ?? false)(`event store contract: ${name}`, () => {
    let subject: ContractSubject;
    const store = () => subject.store;

    beforeAll(async () => {
      subject = await factory();
    });
    afterAll(async () => {
      await subject?.cleanup();
    });

    const fromHead = async () => (await store().headPosition()) ?? ("start" as const);

    it("round-trips events: data, metadata, types, ids, revisions from 0, increasing positions", async () => {
      const stream = uniqueStream("roundtrip");
      const givenId = randomUUID();
      const written = [
        {
          id: givenId,
          type: "DomainAdded",
          data: { domain: "example.com", nested: { list: [1, "two", null] } },
        },
        {
          type: "SpfOriginalUpdated",
          data: ["v=spf1", "-all"],
          metadata: { causedBy: "key:abc", correlationId: "c-1", occurredAt: "2026-01-02T03:04:05.000Z" },
        },
        { type: "Noted", data: "just a string", metadata: { causedBy: "process:cli", extra: { n: 1 } } },
      ];
      const first = await store().append(stream, written, "no_stream");
      expect(first.nextRevision).toBe(2n);
      const second = await store().append(stream, [{ type: "Counted", data: 42 }], 2n);
      expect(second.nextRevision).toBe(3n);
      expect(second.position > first.position).toBe(true);

      const events = await store().readStream(stream);
      expect(events.map((event) => event.revision)).toEqual([0n, 1n, 2n, 3n]);
      expect(events.map((event) => event.type)).toEqual([
        "DomainAdded",
        "SpfOriginalUpdated",
        "Noted",
        "Counted",
      ]);
      expect(events.map((event) => event.data)).toEqual([...written.map((event) => event.data), 42]);
      expect(events.map((event) => event.metadata)).toEqual([
        {},
        written[1]!.metadata,
        written[2]!.metadata,
        {},
      ]);
      expect(events.every((event) => event.stream === stream)).toBe(true);
      expect(events[0]!.id).toBe(givenId);
      expect(new Set(events.map((event) => event.id)).size).toBe(4);
      for (const event of events) {
        expect(event.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        expect(event.recordedAt).toBeInstanceOf(Date);
        expect(Math.abs(event.recordedAt.getTime() - Date.now())).toBeLessThan(60_000);
      }
      expectStrictlyIncreasing(events.map((event) => event.position));
      expect(events[2]!.position).toBe(first.position);
      expect(events[3]!.position).toBe(second.position);
    });

    it("checks every kind of expected revision and reports the actual one", async () => {
      const missing = uniqueStream("expect-missing");
      const stream = uniqueStream("expect");
      const event = { type: "Happened", data: {} };
      const rejects = async (target: string, expected: ExpectedRevision, actual: bigint | null) => {
        const error = await store()
          .append(target, [event], expected)
          .then(
            () => null,
            (caught: unknown) => caught,
          );
        expect(error).toBeInstanceOf(WrongExpectedVersionError);
        const wrong = error as WrongExpectedVersionError;
        expect(wrong.stream).toBe(target);
        expect(wrong.expected).toBe(expected);
        expect(wrong.actual).toBe(actual);
      };

      await rejects(missing, "stream_exists", null);
      await rejects(missing, 0n, null);
      await rejects(missing, 5n, null);
      expect(await store().readStream(missing)).toEqual([]);

      expect((await store().append(stream, [event, event], "no_stream")).nextRevision).toBe(1n);
      await rejects(stream, "no_stream", 1n);
      await rejects(stream, 0n, 1n);
      await rejects(stream, 2n, 1n);
      expect((await store().append(stream, [event], 1n)).nextRevision).toBe(2n);
      expect((await store().append(stream, [event], "stream_exists")).nextRevision).toBe(3n);
      expect((await store().append(stream, [event], "any")).nextRevision).toBe(4n);
      const other = uniqueStream("expect-any");
      expect((await store().append(other, [event], "any")).nextRevision).toBe(0n);
      // Rejected appends wrote nothing.
      expect((await store().readStream(stream)).map((e) => e.revision)).toEqual([0n, 1n, 2n, 3n, 4n]);
    });

    it("lets exactly one of several concurrent no_stream creators win", async () => {
      for (let round = 0; round < 5; round++) {
        const stream = uniqueStream("create-race");
        const results = await Promise.allSettled(
          Array.from({ length: 6 }, (_, writer) =>
            store().append(stream, [{ type: "Created", data: { writer } }], "no_stream"),
          ),
        );
        const won = results.filter((result) => result.status === "fulfilled");
        const lost = results.filter((result) => result.status === "rejected");
        expect(won).toHaveLength(1);
        for (const result of lost) {
          expect(result.reason).toBeInstanceOf(WrongExpectedVersionError);
          expect((result.reason as WrongExpectedVersionError).actual).toBe(0n);
        }
        expect(await store().readStream(stream)).toHaveLength(1);
      }
    });

    it("reads a stream from a revision, up to a limit", async () => {
      const stream = uniqueStream("read-stream");
      await store().append(
        stream,
        // More than ten, so that a text sort of revisions would show.
        Array.from({ length: 12 }, (_, n) => ({ type: "Numbered", data: { n } })),
        "no_stream",
      );
      const revisions = async (fromRevision?: bigint, limit?: number) =>
        (await store().readStream(stream, { fromRevision, limit })).map((event) => event.revision);
      expect(await revisions()).toEqual(Array.from({ length: 12 }, (_, n) => BigInt(n)));
      expect(await revisions(3n, 4)).toEqual([3n, 4n, 5n, 6n]);
      expect(await revisions(8n)).toEqual([8n, 9n, 10n, 11n]);
      expect(await revisions(undefined, 2)).toEqual([0n, 1n]);
      expect(await revisions(12n)).toEqual([]);
      expect(await store().readStream(uniqueStream("never-written"))).toEqual([]);
    });

    it("pages readAll from the start and from a position, reaching every event once", async () => {
      const before = await fromHead();
      const prefix = uniqueStream("read-all");
      const streams = Array.from({ length: 5 }, (_, n) => `${prefix}-${n}`);
      const mine = (event: RecordedEvent) => event.stream.startsWith(prefix);
      const appended: string[] = [];
      let last = 0n;
      for (let n = 0; n < 25; n++) {
        const id = randomUUID();
        appended.push(id);
        last = (await store().append(streams[n % 5]!, [{ id, type: "Paged", data: { n } }], "any")).position;
      }
      await waitForHead(store(), last);

      const all = await readAllPaged(store(), before, 7, mine);
      expect(all.map((event) => event.id)).toEqual(appended);
      expectStrictlyIncreasing(all.map((event) => event.position));
      expect(all[24]!.position).toBe(last);

      const afterTenth = await readAllPaged(store(), all[9]!.position, 4, mine);
      expect(afterTenth.map((event) => event.id)).toEqual(appended.slice(10));
      expect(
        await store()
          .readAll(last, 10)
          .then((page) => page.filter(mine)),
      ).toEqual([]);
      expect((await store().readAll(before, 3)).length).toBe(3);
      const head = await store().headPosition();
      expect(head !== null && head >= last).toBe(true);
    });

    it("rejects bad input with clear errors", async () => {
      const stream = uniqueStream("bad-input");
      await expect(store().append(stream, [], "any")).rejects.toThrow(/at least one event/);
      await expect(store().append("", [{ type: "T", data: {} }], "any")).rejects.toThrow(/stream name/);
      await expect(store().append(stream, [{ type: "", data: {} }], "any")).rejects.toThrow(/event type/);
      await expect(store().readAll("start", 0)).rejects.toThrow(/limit/);
    });

    it("subscribes: catches up in batches, then delivers live events, and ends on close", async () => {
      const before = await fromHead();
      const stream = uniqueStream("subscribe");
      const mine = (event: RecordedEvent) => event.stream === stream;
      await store().append(
        stream,
        Array.from({ length: 30 }, (_, n) => ({ type: "Early", data: { n } })),
        "no_stream",
      );
      const subscription = store().subscribe(before, { maxBatch: 8 });
      const collector = collect(subscription, mine);
      await collector.until((events) => events.length === 30);
      expect(Math.max(...collector.batchSizes)).toBeLessThanOrEqual(8);

      for (let n = 0; n < 4; n++) {
        await store().append(
          stream,
          Array.from({ length: 5 }, () => ({ type: "Live", data: { n } })),
          "any",
        );
        await sleep(30);
      }
      await collector.until((events) => events.length === 50);
      expect(collector.events.map((event) => event.revision)).toEqual(
        Array.from({ length: 50 }, (_, n) => BigInt(n)),
      );
      expectStrictlyIncreasing(collector.events.map((event) => event.position));

      const closedAt = Date.now();
      await subscription.close();
      await collector.finished;
      expect(Date.now() - closedAt).toBeLessThan(2_000);

      // A subscription from a position starts right after it.
      const resumed = store().subscribe(collector.events[44]!.position, { maxBatch: 100 });
      const rest = collect(resumed, mine);
      await rest.until((events) => events.length === 5);
      await sleep(100);
      expect(rest.events.map((event) => event.revision)).toEqual([45n, 46n, 47n, 48n, 49n]);
      await resumed.close();
      await rest.finished;
    });

    it("ends an idle subscription promptly on close", async () => {
      const subscription = store().subscribe((await store().headPosition()) ?? "start");
      const collector = collect(subscription, () => true);
      await sleep(150);
      const closedAt = Date.now();
      await subscription.close();
      await collector.finished;
      expect(Date.now() - closedAt).toBeLessThan(1_000);
    });

    it("delivers 10,000 events from 8 concurrent writers to a subscriber exactly once, in readAll's order", async () => {
      const total = 10_000;
      const writers = 8;
      const before = await fromHead();
      const prefix = uniqueStream("load");
      const streams = Array.from({ length: 12 }, (_, n) => `${prefix}-${n}`);
      const mine = (event: RecordedEvent) => event.stream.startsWith(prefix);

      const subscription = store().subscribe(before, { maxBatch: 250 });
      const collector = collect(subscription, mine);

      let seed = 7;
      const random = (below: number) => {
        seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
        return seed % below;
      };
      await Promise.all(
        Array.from({ length: writers }, async (_, writer) => {
          let remaining = total / writers;
          while (remaining > 0) {
            const size = Math.min(remaining, 1 + random(20));
            remaining -= size;
            const stream = streams[random(streams.length)]!;
            const events = Array.from({ length: size }, (_, n) => ({ type: "Loaded", data: { writer, n } }));
            await store().append(stream, events, "any");
          }
        }),
      );

      await collector.until((events) => events.length >= total, 60_000);
      await sleep(200);
      await subscription.close();
      await collector.finished;

      const delivered = collector.events;
      expect(delivered).toHaveLength(total);
      expect(new Set(delivered.map((event) => event.id)).size).toBe(total);
      expectStrictlyIncreasing(delivered.map((event) => event.position));
      // Each stream's events appear in revision order, without gaps.
      const nextRevision = new Map<string, bigint>();
      for (const event of delivered) {
        expect(event.revision).toBe(nextRevision.get(event.stream) ?? 0n);
        nextRevision.set(event.stream, event.revision + 1n);
      }

      const replayed = await readAllPaged(store(), before, 1_000, mine);
      expect(replayed.map((event) => event.id)).toEqual(delivered.map((event) => event.id));
      expect(replayed.map((event) => event.position)).toEqual(delivered.map((event) => event.position));
    });
  });
}
