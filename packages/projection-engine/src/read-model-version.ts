import type { AnySchema } from "@dmarc-ledger/db";
import { type Kysely, sql } from "kysely";
import type { Projection } from "./projection.js";
import type { ProjectionCheckpointSchema } from "./schema.js";

/**
 * Where the projections' checkpoints stand, as one string: the read models they write change only
 * when a batch moves these (or a replay swaps them in, which writes them anew), so an answer
 * computed from them holds while this is the same. Read before the answer: a batch committing in
 * between makes the answer newer than its version, never older.
 */
export async function readModelVersion(
  handle: Kysely<AnySchema>,
  projections: readonly Pick<Projection, "name">[],
): Promise<string> {
  const db: Kysely<ProjectionCheckpointSchema> = handle;
  const { rows } = await sql<{ version: string | null }>`
    select string_agg(projection || '@' || position::text || '@' || extract(epoch from updated_at)::text, ','
      order by projection) as version
    from projection_checkpoint where projection = any(${projections.map((p) => p.name)}::text[])`.execute(db);
  return rows[0]?.version ?? "";
}
