import { openTestPglite } from "@dmarc-ledger/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  followStore,
  openPostgresEventStore,
  type PostgresEventStore,
  type RecordedEvent,
} from "../src/index.js";
import { uniqueStream } from "./helpers.js";

describe("followStore", () => {
  let store: PostgresEventStore;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const database = await openTestPglite();
    store = await openPostgresEventStore(database, { pollIntervalMs: 20 });
    close = async () => {
      await store.close();
      await database.close();
    };
  });
  afterAll(async () => close());

  it("delivers every event once, in order, then stops", async () => {
    const stream = uniqueStream("follow");
    await store.append(
      stream,
      [1, 2, 3].map((n) => ({ type: "Counted", data: { n } })),
      "no_stream",
    );
    const seen: RecordedEvent[] = [];
    const follower = followStore({
      store,
      from: async () => "start",
      onBatch: async (batch) => {
        seen.push(...batch.filter((event) => event.stream === stream));
      },
      maxBatch: 2,
    });
    await expect.poll(() => seen.length).toBe(3);
    await follower.stop();
    expect(seen.map((event) => (event.data as { n: number }).n)).toEqual([1, 2, 3]);
  });

  // The in-process service's stop hung its test's hook for two minutes (issue 27's sessions): the
  // projector was stopped while its follower read its checkpoint, and the subscription opened
  // after that polled on, caught up, with nothing to close it.
  it("stops when stopped while it reads where to start", async () => {
    let fromAsked!: () => void;
    const asked = new Promise<void>((resolve) => {
      fromAsked = resolve;
    });
    let answerFrom!: () => void;
    const answered = new Promise<void>((resolve) => {
      answerFrom = resolve;
    });
    // Caught up from the first read: no batch comes after which the loop would look at `stopped`.
    const head = await store.headPosition();
    const follower = followStore({
      store,
      from: async () => {
        fromAsked();
        await answered;
        return head ?? "start";
      },
      onBatch: async () => {},
    });
    await asked;
    const stopping = follower.stop();
    answerFrom();
    const outcome = await Promise.race([
      stopping.then(() => "stopped"),
      new Promise<string>((resolve) => setTimeout(() => resolve("still following after 5 s"), 5_000)),
    ]);
    expect(outcome).toBe("stopped");
  });
});
