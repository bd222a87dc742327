import type { ColumnType } from "kysely";

export interface ProjectionCheckpointTable {
  /** A projection's name, or a background worker's ("process:safe_spf"). */
  projection: string;
  /** The global position of the last event applied, as a decimal string (positions exceed int8). */
  position: string;
  updated_at: ColumnType<Date, Date | string, Date | string>;
}

/** The engine's own table. */
export interface ProjectionCheckpointSchema {
  projection_checkpoint: ProjectionCheckpointTable;
}
