import { type QueryExecutorProvider, sql } from "kysely";
import type { FromPosition, ReadStreamOptions, RecordedEvent } from "../port.js";
import { assertLimit } from "../validate.js";
import { decodeGlobalPosition, encodeGlobalPosition } from "./global-order.js";
import { type EventRow, eventColumns, toRecordedEvent } from "./rows.js";

// ORDER BY names the table's columns: bare names would pick the ::text output columns of the
// same names and sort "10" before "9".

// No visibility filter is needed: appends are serialised, so committed rows never appear behind
// rows a reader has already seen (see global-order.ts).

/** A stream's events in revision order. */
export async function readStream(
  db: QueryExecutorProvider,
  stream: string,
  options: ReadStreamOptions = {},
): Promise<RecordedEvent[]> {
  const from = options.fromRevision ?? 0n;
  const limit = options.limit ?? null;
  if (limit !== null) assertLimit(limit);
  const { rows } = await sql<EventRow>`
    select ${eventColumns} from events
    where stream = ${stream} and revision >= ${String(from)}::bigint
    order by events.revision
    limit ${limit === null ? null : String(limit)}::bigint`.execute(db);
  return rows.map(toRecordedEvent);
}

/** Default ceiling on the JSON a page of the global order carries (see readAll). */
export const defaultMaxPageBytes = 8 * 1024 * 1024;

/**
 * Up to `limit` events after `from`, ending with the event whose documents take the page to
 * `maxBytes` or past it (so a page holds at least one event). A reader's memory is then bounded by bytes, not by a count of events that
 * may each be a 1 MiB report chunk. The sizes come from `octet_length`, which reads a stored
 * document's length from its TOAST pointer without fetching or decompressing it.
 */
export async function readAll(
  db: QueryExecutorProvider,
  from: FromPosition,
  limit: number,
  maxBytes: number = defaultMaxPageBytes,
): Promise<RecordedEvent[]> {
  assertLimit(limit);
  assertLimit(maxBytes);
  let after = sql`true`;
  if (from !== "start") {
    const key = decodeGlobalPosition(from);
    after = sql`(transaction_id, position) > (${String(key.transactionId)}::xid8, ${String(key.position)}::bigint)`;
  }
  const { rows } = await sql<EventRow>`
    select ${eventColumns} from (
      select events.*, sum(octet_length(data::text) + octet_length(metadata::text))
        over (order by events.transaction_id, events.position) as bytes_through
      from events
      where ${after}
      order by events.transaction_id, events.position
      limit ${String(limit)}::bigint
    ) as events
    where bytes_through - octet_length(data::text) - octet_length(metadata::text) < ${String(maxBytes)}::bigint
    order by events.transaction_id, events.position`.execute(db);
  return rows.map(toRecordedEvent);
}

export async function headPosition(db: QueryExecutorProvider): Promise<bigint | null> {
  const { rows } = await sql<{ transaction_id: string; position: string }>`
    select transaction_id::text as transaction_id, position::text as position from events
    order by events.transaction_id desc, events.position desc
    limit 1`.execute(db);
  const row = rows[0];
  if (!row) return null;
  return encodeGlobalPosition({ transactionId: BigInt(row.transaction_id), position: BigInt(row.position) });
}

/**
 * The events at the given global positions, in the order asked (those that exist). The row's
 * own position (the sequence value, the table's key) is unique: the transaction half is not
 * needed to find it, only to check it.
 */
export async function readAt(
  db: QueryExecutorProvider,
  positions: readonly bigint[],
): Promise<RecordedEvent[]> {
  if (positions.length === 0) return [];
  const keys = positions.map((position) => decodeGlobalPosition(position).position.toString());
  const { rows } = await sql<EventRow>`
    select ${eventColumns} from events where position = any(${keys}::bigint[])`.execute(db);
  const byPosition = new Map<bigint, RecordedEvent>();
  for (const row of rows) {
    const event = toRecordedEvent(row);
    byPosition.set(event.position, event);
  }
  return positions.flatMap((position) => {
    const event = byPosition.get(position);
    return event ? [event] : [];
  });
}
