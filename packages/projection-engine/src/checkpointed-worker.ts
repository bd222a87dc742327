import type { FromPosition } from "@dmarc-ledger/event-store";
import { type Kysely, sql } from "kysely";
import type { ReadModelSchema } from "./schema.js";

/**
 * Where a background worker that follows the event store (the Safe SPF process, the source-IP
 * resolver) stopped: a row of its own in projection_checkpoint, so that it resumes there.
 */
export async function readWorkerCheckpoint(db: Kysely<ReadModelSchema>, name: string): Promise<FromPosition> {
  const row = await db
    .selectFrom("projection_checkpoint")
    .select(sql<string>`position::text`.as("position"))
    .where("projection", "=", name)
    .executeTakeFirst();
  return row && BigInt(row.position) >= 0n ? BigInt(row.position) : "start";
}

export async function writeWorkerCheckpoint(
  db: Kysely<ReadModelSchema>,
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
