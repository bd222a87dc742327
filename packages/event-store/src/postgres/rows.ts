import { sql } from "kysely";
import type { EventMetadata, RecordedEvent } from "../port.js";
import { encodeGlobalPosition } from "./global-order.js";

/**
 * An events row as selected by `eventColumns`. int8 and xid8 are selected as text: pg returns
 * int8 as strings, PGlite as numbers (losing precision above 2^53), so both go through BigInt().
 * The documents are JSON text (migration 004), parsed here.
 */
export interface EventRow {
  id: string;
  stream: string;
  type: string;
  revision: string;
  position: string;
  transaction_id: string;
  data: string;
  metadata: string;
  recorded_at: Date | string;
}

export const eventColumns = sql`
  id::text as id, stream, type, revision::text as revision, position::text as position,
  transaction_id::text as transaction_id, data, metadata, recorded_at`;

export function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    id: row.id,
    stream: row.stream,
    type: row.type,
    revision: BigInt(row.revision),
    position: encodeGlobalPosition({
      transactionId: BigInt(row.transaction_id),
      position: BigInt(row.position),
    }),
    data: JSON.parse(row.data),
    metadata: JSON.parse(row.metadata) as EventMetadata,
    recordedAt: row.recorded_at instanceof Date ? row.recorded_at : new Date(row.recorded_at),
  };
}
