import { type QueryExecutorProvider, sql } from "kysely";
import type { FromPosition, ReadStreamOptions, RecordedEvent } from "../port.js";
import { assertLimit } from "../validate.js";
import { decodeGlobalPosition, encodeGlobalPosition } from "./global-order.js";
import { type EventRow, eventColumns, toRecordedEvent } from "./rows.js";

// ORDER BY names the table's columns: bare names would pick the ::text output columns of the
// same names and sort "10" before "9".

/**
 * Only transactions below the snapshot's xmin are settled (see global-order.ts). A scalar
 * subquery, so that it is computed once per statement.
 */
const settled = sql`transaction_id < (select pg_snapshot_xmin(pg_current_snapshot()))`;

/**
 * A stream's own events are read without the settled filter: writers of one stream are serialised
 * and committed rows of a stream never appear behind ones already read, and an aggregate must read
 * its own writes at once.
 */
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
    where ${settled} and ${after}
    order by events.transaction_id, events.position
    limit ${String(limit)}::bigint`.execute(db);
  return rows.map(toRecordedEvent);
}

export async function headPosition(db: QueryExecutorProvider): Promise<bigint | null> {
  const { rows } = await sql<{ transaction_id: string; position: string }>`
    select transaction_id::text as transaction_id, position::text as position from events
    where ${settled}
    order by events.transaction_id desc, events.position desc
    limit 1`.execute(db);
  const row = rows[0];
  if (!row) return null;
  return encodeGlobalPosition({ transactionId: BigInt(row.transaction_id), position: BigInt(row.position) });
}
