import type { AnySchema } from "@dmarc-ledger/db";
import type { EventStore, FromPosition } from "@dmarc-ledger/event-store";
import { type Kysely, sql } from "kysely";
import type { Projection } from "./projection.js";
import type { ProjectionCheckpointSchema } from "./schema.js";

export interface ProjectionLag {
  projection: string;
  /** Events in the store after the projection's checkpoint, counted up to the limit asked for. */
  events: number;
  /** Age of the oldest event the projection has not applied yet; 0 when it is caught up. */
  seconds: number;
}

/**
 * How far each projection is behind the event store. Events are counted by reading them (the
 * store's positions are not dense), at most `countUpTo` per distinct checkpoint: projections run
 * on one shared subscription, so their checkpoints are almost always one and the same.
 */
export async function projectionLags(
  handle: Kysely<AnySchema>,
  store: EventStore,
  projections: readonly Projection[],
  countUpTo: number,
  now: Date = new Date(),
): Promise<ProjectionLag[]> {
  const db: Kysely<ProjectionCheckpointSchema> = handle;
  const rows = await db
    .selectFrom("projection_checkpoint")
    .select(["projection", sql<string>`position::text`.as("position")])
    .where(
      "projection",
      "in",
      projections.map((projection) => projection.name),
    )
    .execute();
  const checkpoints = new Map(rows.map((row) => [row.projection, BigInt(row.position)]));
  const behindFrom = new Map<string, Promise<{ events: number; seconds: number }>>();
  const measure = (from: FromPosition) => {
    const key = String(from);
    let measured = behindFrom.get(key);
    if (!measured) {
      measured = store.readAll(from, countUpTo).then((events) => ({
        events: events.length,
        seconds: events[0] ? Math.max(0, (now.getTime() - events[0].recordedAt.getTime()) / 1000) : 0,
      }));
      behindFrom.set(key, measured);
    }
    return measured;
  };
  return Promise.all(
    projections.map(async (projection) => {
      const checkpoint = checkpoints.get(projection.name);
      const from: FromPosition = checkpoint === undefined || checkpoint < 0n ? "start" : checkpoint;
      return { projection: projection.name, ...(await measure(from)) };
    }),
  );
}
