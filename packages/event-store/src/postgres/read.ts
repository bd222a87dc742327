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

export async function readAll(
  db: QueryExecutorProvider,
  from: FromPosition,
  limit: number,
): Promise<RecordedEvent[]> {
  assertLimit(limit);
  let after = sql`true`;
  if (from !== "start") {
    const key = decodeGlobalPosition(from);
    after = sql`(transaction_id, position) > (${String(key.transactionId)}::xid8, ${String(key.position)}::bigint)`;
  }
  const { rows } = await sql<EventRow>`
    select ${eventColumns} from events
    where ${after}
    order by events.transaction_id, events.position
    limit ${String(limit)}::bigint`.execute(db);
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
