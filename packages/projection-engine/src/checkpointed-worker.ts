import type { AnySchema } from "@dmarc-ledger/db";
import { type EventStore, type FromPosition, followStore } from "@dmarc-ledger/event-store";
import { type DomainEvent, decodeEvent, type EventType } from "@dmarc-ledger/events";
import { type Kysely, sql } from "kysely";
import type { ProjectionCheckpointSchema } from "./schema.js";

export interface CheckpointedWorkerOptions {
  store: EventStore;
  db: Kysely<AnySchema>;
  /**
   * Its row in projection_checkpoint, beside the projections' (which it is not one of):
   * "process:<name>", so that no projection can take the name.
   */
  name: string;
  /** The event types it reacts to: only these are decoded (decoding validates the whole payload). */
  handles: ReadonlySet<EventType>;
  /**
   * Reacts to a batch's events of those types, in order (none, for a batch without any). Resolves
   * "incomplete" when it was cut short (the worker stopping): the checkpoint then stays where it
   * was, and the next start sees the batch again.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing finished its batch
  onEvents(events: DomainEvent[]): Promise<void | "incomplete">;
  /** Called when a batch fails; the batch comes again after a pause, from the checkpoint. */
  onError?: (error: unknown) => void;
  maxBatch?: number;
}

export interface RunningWorker {
  /** Stops following; waits for the batch being handled. */
  stop(): Promise<void>;
}

/**
 * A background worker that follows the event store from a checkpoint of its own (the Safe SPF
 * process, the source-IP resolver): unlike a projection, it acts on the world (DNS, appends) and
 * its checkpoint moves after each batch is handled, not in one transaction with its effects, so
 * what it does must be safe to do again (appends with an expected revision).
 */
export function startCheckpointedWorker(options: CheckpointedWorkerOptions): RunningWorker {
  const { store, db, name, handles } = options;
  return followStore({
    store,
    from: () => readWorkerCheckpoint(db, name),
    onBatch: async (batch) => {
      const events: DomainEvent[] = [];
      for (const recorded of batch) {
        if (!handles.has(recorded.type as EventType)) continue;
        const event = decodeEvent(recorded);
        if (event && handles.has(event.type)) events.push(event);
      }
      if ((await options.onEvents(events)) === "incomplete") return;
      await writeWorkerCheckpoint(db, name, batch.at(-1)!.position);
    },
    ...(options.onError ? { onError: options.onError } : {}),
    maxBatch: options.maxBatch ?? 100,
  });
}

/** Where the worker stopped; "start" before its first batch. */
async function readWorkerCheckpoint(
  db: Kysely<ProjectionCheckpointSchema>,
  name: string,
): Promise<FromPosition> {
  const row = await db
    .selectFrom("projection_checkpoint")
    .select(sql<string>`position::text`.as("position"))
    .where("projection", "=", name)
    .executeTakeFirst();
  return row && BigInt(row.position) >= 0n ? BigInt(row.position) : "start";
}

async function writeWorkerCheckpoint(
  db: Kysely<ProjectionCheckpointSchema>,
  name: string,
  position: bigint,
): Promise<void> {
  await db
    .insertInto("projection_checkpoint")
    .values({ projection: name, position: position.toString(), updated_at: new Date() })
    .onConflict((oc) =>
      oc.column("projection").doUpdateSet({ position: position.toString(), updated_at: new Date() }),
    )
    .execute();
}
