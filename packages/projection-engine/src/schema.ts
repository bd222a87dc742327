import type { ColumnType } from "kysely";

export interface ProjectionCheckpointTable {
  /** A projection's name, or a background worker's ("process:safe_spf"). */
  projection: string;
  /** The global position of the last event applied, as a decimal string (positions exceed int8). */
  position: string;
  updated_at: ColumnType<Date, Date | string, Date | string>;
}

export interface ProjectionLeaseTable {
  /** "projection:<name>", "job:<name>" or "member:<owner>" (a projector process's heartbeat). */
  name: string;
  owner: string;
  /** A bigint as a decimal string; grows at every change of owner. */
  token: ColumnType<string, string | number | bigint, string | number | bigint>;
  expires_at: ColumnType<Date, Date | string, Date | string>;
}

/** The engine's own tables. */
export interface ProjectionCheckpointSchema {
  projection_checkpoint: ProjectionCheckpointTable;
  projection_lease: ProjectionLeaseTable;
}
