/**
 * A background worker follows the store from its own checkpoint: it sees each event of its types
 * once across restarts, and a batch it says it did not finish comes again at the next start.
 */
import type { DomainEvent } from "@dmarc-ledger/events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CheckpointedWorkerOptions, startCheckpointedWorker } from "../src/checkpointed-worker.js";
import { allEvents, checkpointOf, type EngineWorld, openEngineWorld } from "./support.js";

const tenantOf = (event: DomainEvent) => (event.type === "TenantCreated" ? event.data.tenantId : event.type);

async function until(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("startCheckpointedWorker", () => {
  let world: EngineWorld;
  beforeAll(async () => {
    world = await openEngineWorld("dl_engine_worker");
  });
  afterAll(async () => world?.close());

  it("resumes after its checkpoint, and sees again a batch it did not finish", async () => {
    await world.createTenants(5);
    const seen: string[] = [];
    const start = (onEvents: CheckpointedWorkerOptions["onEvents"]) =>
      startCheckpointedWorker({
        store: world.store,
        db: world.db,
        name: "process:test_worker",
        handles: new Set(["TenantCreated"]),
        onEvents,
        maxBatch: 2,
      });

    // Cut short on every batch: the checkpoint never moves.
    const cutShort = start(async (events) => {
      seen.push(...events.map(tenantOf));
      return "incomplete";
    });
    await until("the first batch", () => seen.length > 0);
    await cutShort.stop();
    expect(await checkpointOf(world.db, "process:test_worker")).toBeNull();

    const first = (await allEvents(world.store)).map(
      (event) => (event.data as { tenantId: string }).tenantId,
    );
    seen.length = 0;
    let worker = start(async (events) => {
      seen.push(...events.map(tenantOf));
    });
    await until("every event", () => seen.length === first.length);
    await worker.stop();
    expect(seen).toEqual(first);
    expect(await checkpointOf(world.db, "process:test_worker")).toBe(
      (await allEvents(world.store)).at(-1)!.position,
    );

    // Restarted, it sees only what came since.
    seen.length = 0;
    worker = start(async (events) => {
      seen.push(...events.map(tenantOf));
    });
    const last = await world.createTenants(3);
    await until("the new events", () => seen.length === 3);
    await worker.stop();
    expect(seen.at(-1)).toBe((last.data as { tenantId: string }).tenantId);
    expect(seen.some((tenant) => first.includes(tenant))).toBe(false);
  });
});
