import type { AnySchema } from "@dmarc-ledger/db";
import {
  type EventStore,
  type FromPosition,
  followStore,
  type RecordedEvent,
} from "@dmarc-ledger/event-store";
import { type DomainEvent, decodeEvent } from "@dmarc-ledger/events";
import { type Kysely, sql, type Transaction } from "kysely";
import type { Projection } from "./projection.js";
import type { ProjectionCheckpointSchema } from "./schema.js";

/** Checkpoint value of a projection that has applied nothing yet. */
const noPosition = "-1";

export interface ProjectorOptions {
  store: EventStore;
  /** Any handle on the database: each projection sees it through its own tables. */
  db: Kysely<AnySchema>;
  projections: readonly Projection[];
  maxBatch?: number;
  /** Called when a batch fails; the projector retries it after a pause. */
  onError?: (error: unknown) => void;
}

export interface RunningProjector {
  /** Resolves once every projection has applied everything up to `position`. */
  waitFor(position: bigint, timeoutMs: number): Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * Applies a batch of recorded events to every projection in one transaction. Each projection's
 * checkpoint row is locked first and events at or before it are skipped, so that two projector
 * processes working at once, or a batch redelivered after a crash, never count anything twice.
 */
export async function applyBatch(
  db: Kysely<AnySchema>,
  projections: readonly Projection[],
  batch: readonly RecordedEvent[],
): Promise<void> {
  if (batch.length === 0) return;
  await db.transaction().execute((trx) => applyBatchWithin(trx, projections, batch));
}

/** applyBatch inside the caller's transaction (the rebuild sets its search path first). */
export async function applyBatchWithin(
  trx: Transaction<AnySchema>,
  projections: readonly Projection[],
  batch: readonly RecordedEvent[],
): Promise<void> {
  const last = batch.at(-1);
  if (!last) return;
  const decoded = decodeBatch(batch);
  for (const projection of projections) await applyOne(trx, projection, decoded, last.position);
}

function decodeBatch(batch: readonly RecordedEvent[]): DomainEvent[] {
  return batch.map(decodeEvent).filter((event): event is DomainEvent => event !== null);
}

/** One projection's part of a batch that ends at `last`, under its checkpoint's lock. */
async function applyOne(
  trx: Transaction<AnySchema>,
  projection: Projection,
  decoded: readonly DomainEvent[],
  last: bigint,
): Promise<void> {
  const checkpoint = await lockCheckpoint(trx, projection.name);
  const relevant = decoded.filter(
    (event) => event.position > checkpoint && projection.handles.has(event.type),
  );
  if (relevant.length > 0) await projection.apply(trx, relevant);
  if (last > checkpoint) {
    await trx
      .updateTable("projection_checkpoint")
      .set({ position: last.toString(), updated_at: new Date() })
      .where("projection", "=", projection.name)
      .execute();
  }
}

async function lockCheckpoint(
  trx: Transaction<ProjectionCheckpointSchema>,
  projection: string,
): Promise<bigint> {
  await trx
    .insertInto("projection_checkpoint")
    .values({ projection, position: noPosition, updated_at: new Date() })
    .onConflict((oc) => oc.column("projection").doNothing())
    .execute();
  const row = await trx
    .selectFrom("projection_checkpoint")
    .select(sql<string>`position::text`.as("position"))
    .where("projection", "=", projection)
    .forUpdate()
    .executeTakeFirstOrThrow();
  return BigInt(row.position);
}

/** The lowest checkpoint among the projections: where a shared subscription must start. */
export async function lowestCheckpoint(
  db: Kysely<AnySchema>,
  projections: readonly Projection[],
): Promise<FromPosition> {
  const positions = await checkpointsOf(db, projections);
  if (positions === null || positions.length === 0) return "start";
  // Positions are bigints: Math.min does not take them.
  let lowest = positions[0]!;
  for (const position of positions) if (position < lowest) lowest = position;
  return lowest < 0n ? "start" : lowest;
}

/** Whether every projection has applied everything up to `position`. */
export async function projectionsReached(
  db: Kysely<AnySchema>,
  projections: readonly Projection[],
  position: bigint,
): Promise<boolean> {
  const positions = await checkpointsOf(db, projections);
  return positions?.every((reached) => reached >= position) ?? false;
}

/** The projections' checkpoints; null while one of them has none yet. */
async function checkpointsOf(
  db: Kysely<ProjectionCheckpointSchema>,
  projections: readonly Projection[],
): Promise<bigint[] | null> {
  const rows = await db
    .selectFrom("projection_checkpoint")
    .select(sql<string>`position::text`.as("position"))
    .where(
      "projection",
      "in",
      projections.map((projection) => projection.name),
    )
    .execute();
  return rows.length < projections.length ? null : rows.map((row) => BigInt(row.position));
}

/**
 * Polls the checkpoints (they may be moved by a projector in another process) until they reach
 * `position` or the time is up. Returns whether they reached it.
 */
export async function waitForProjections(
  db: Kysely<AnySchema>,
  projections: readonly Projection[],
  position: bigint,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await projectionsReached(db, projections, position)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}

/** Applies everything the store holds now, then returns. Used by replay, import and tests. */
export async function catchUp(options: ProjectorOptions): Promise<void> {
  const { store, db, projections } = options;
  const read = (from: FromPosition) => {
    const reading = store.readAll(from, options.maxBatch ?? 500);
    // Awaited below; until then a failure must not count as unhandled.
    reading.catch(() => {});
    return reading;
  };
  let next = read(await lowestCheckpoint(db, projections));
  for (;;) {
    const batch = await next;
    if (batch.length === 0) return;
    // Read the next batch while this one is applied: decoding events and writing rows overlap.
    next = read(batch.at(-1)!.position);
    await applyBatch(db, projections, batch);
  }
}

/** Batches read ahead of the slowest projection in catchUpSideBySide: bounds what it holds. */
const lanesReadAhead = 2;

/**
 * Applies what the store holds now to every projection, each in its own transactions, side by
 * side: the events are read once, and while PostgreSQL writes one projection's rows on one
 * connection the next projection's rows are computed here (catchUp alternates the two, one batch
 * of every projection per transaction). Each projection applies its batches in order under its
 * checkpoint's lock, so nothing is applied twice, also beside another projector; but until it
 * returns the projections may stand at different positions. For bulk work that waits for all of
 * them (an import). A projection with nothing to apply in a batch moves its checkpoint with its
 * next batch that has, or at the end. If one fails, the others finish the batches they have begun
 * and the first failure is thrown; what each committed stays, and a later catch-up goes on from it.
 * Once `signal` aborts (the process stops), no further batch is read: the batches begun are applied
 * and it returns; the projector goes on from there.
 */
export async function catchUpSideBySide(options: ProjectorOptions, signal?: AbortSignal): Promise<void> {
  const { store, db, projections } = options;
  let from = await lowestCheckpoint(db, projections);
  const lanes: Promise<void>[] = projections.map(() => Promise.resolve());
  /** The position each lane's last batch ends at (null: none yet). */
  const givenTo: (bigint | null)[] = projections.map(() => null);
  const batchesDone: Promise<unknown>[] = [];
  let failed: unknown = null;
  let readAny = false;
  // Commits without waiting for their WAL to reach the disk: a read model's rows and its
  // checkpoint commit together, so a commit lost to a crash of the server is a batch applied
  // again after it, never a count lost or doubled. The import's 153 commits for 10,000 reports
  // each waited for a flush (and the backends flushed themselves): waiting for the read models
  // took 10.3 to 10.8 s with it, 9.6 to 10.8 s (mean 0.55 s less) and 0.5 s less of PostgreSQL's
  // CPU without, four alternating pairs (issue 27). The projector's transactions keep waiting: a
  // streaming replica receives only flushed WAL, and the API's reads there wait for its writes.
  const apply = (projection: Projection, decoded: DomainEvent[], last: bigint) =>
    db.transaction().execute(async (trx) => {
      await sql`set local synchronous_commit = off`.execute(trx);
      return applyOne(trx, projection, decoded, last);
    });
  try {
    for (;;) {
      if (signal?.aborted) break;
      const batch = await store.readAll(from, options.maxBatch ?? 500);
      if (batch.length === 0) break;
      const last = batch.at(-1)!.position;
      from = last;
      readAny = true;
      const decoded = decodeBatch(batch);
      const done = projections.map((projection, i) => {
        if (!decoded.some((event) => projection.handles.has(event.type))) return lanes[i]!;
        lanes[i] = lanes[i]!.then(() => (failed === null ? apply(projection, decoded, last) : undefined));
        givenTo[i] = last;
        lanes[i]!.catch((error: unknown) => {
          failed ??= error;
        });
        return lanes[i]!;
      });
      batchesDone.push(Promise.allSettled(done));
      if (batchesDone.length > lanesReadAhead) await batchesDone.shift();
      if (failed !== null) break;
    }
    if (failed === null && readAny && from !== "start") {
      // The checkpoints of the lanes that had nothing in the last batch, to the last event read.
      const last = from;
      projections.forEach((projection, i) => {
        if (givenTo[i] !== last)
          lanes[i] = lanes[i]!.then(() => (failed === null ? apply(projection, [], last) : undefined));
      });
    }
  } finally {
    const settled = await Promise.allSettled(lanes);
    failed ??= settled.find((result) => result.status === "rejected")?.reason ?? null;
  }
  if (failed !== null) throw failed;
}

/** Runs the projections on a catch-up subscription until stopped. */
export function startProjector(options: ProjectorOptions): RunningProjector {
  const { store, db, projections } = options;
  const follower = followStore({
    store,
    from: () => lowestCheckpoint(db, projections),
    onBatch: (batch) => applyBatch(db, projections, batch),
    ...(options.onError ? { onError: options.onError } : {}),
    maxBatch: options.maxBatch ?? 500,
  });
  return {
    waitFor: (position, timeoutMs) => waitForProjections(db, projections, position, timeoutMs),
    stop: () => follower.stop(),
  };
}

/**
 * Empties the projections' tables and checkpoints, so that the next catch-up rebuilds them from
 * the first event.
 */
export async function resetProjections(
  db: Kysely<AnySchema>,
  projections: readonly Projection[],
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const projection of projections) {
      for (const table of projection.tables) await trx.deleteFrom(table).execute();
      await trx.deleteFrom("projection_checkpoint").where("projection", "=", projection.name).execute();
    }
  });
}
