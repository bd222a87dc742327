import { randomUUID } from "node:crypto";
import { type QueryExecutorProvider, sql } from "kysely";
import {
  type AppendResult,
  type ExpectedRevision,
  type NewEvent,
  WrongExpectedVersionError,
} from "../port.js";
import { assertAppendable, satisfiesExpected, toJsonText } from "../validate.js";
import { encodeGlobalPosition } from "./global-order.js";

/** The two-key advisory lock that serialises appends ("EVTS", 0), apart from other users' locks. */
const appendLockNamespace = 0x45565453;
const appendLockKey = 0;

/**
 * appendWithin was called in a transaction that already has a transaction id (it wrote
 * something, or asked for its id): its events could then sort before events already delivered.
 * Append first, then write the rest of the transaction.
 */
export class AppendNotFirstError extends Error {
  override readonly name = "AppendNotFirstError";
  constructor(readonly stream: string) {
    super(
      `stream ${stream}: the append must come before any other write of its transaction ` +
        "(the transaction already has an id, so its events could sort before delivered ones)",
    );
  }
}
/** An event as the insert sends it: its documents serialised, its id chosen. */
interface SerialisedEvent {
  type: string;
  data: string;
  metadata: string;
  id: string;
}

/**
 * Serialises the events' documents. Done before the append lock is taken: every other append of
 * the deployment waits while it is held, and JSON.stringify of a group's 64 report events was
 * 0.36 to 0.46 s of each import thread's CPU for 10,000 reports (issue 27).
 */
function serialised(events: readonly NewEvent[]): SerialisedEvent[] {
  return events.map((event) => ({
    type: event.type,
    data: toJsonText(event.data),
    metadata: toJsonText(event.metadata ?? {}),
    id: event.id ?? randomUUID(),
  }));
}

/** pg takes at most 65,535 parameters per statement; six per event. */
const eventsPerInsert = 1000;

export type KnownTransactionState = "unknown" | "fresh" | "locked";

interface StreamStateRow {
  revision: string | null;
  own: string;
}

/**
 * Appends inside the caller's transaction (`db.transaction().execute(trx => …)`); the events
 * become visible, and ordered, when that transaction commits.
 *
 * Appends are serialised (see global-order.ts): the append lock is taken before the transaction
 * has an id (taking it assigns none), and the id and sequence values are taken under it, after
 * the previous append committed. A transaction that already has an id may be older than appends
 * already delivered; it is refused with AppendNotFirstError.
 */
export async function appendWithin(
  trx: QueryExecutorProvider,
  stream: string,
  events: readonly NewEvent[],
  expected: ExpectedRevision,
  /**
   * What the caller knows of its transaction: "fresh", nothing was written in it before this
   * append (the check for that is spared); "locked", an earlier append of it took the lock
   * (check and lock are spared). "unknown" checks and locks.
   */
  known: KnownTransactionState = "unknown",
): Promise<AppendResult> {
  assertAppendable(stream, events);
  const documents = serialised(events);
  if (known === "unknown") {
    // Our own earlier append in this transaction holds the lock already, and took its id under it.
    const { rows: lockState } = await sql<{ assigned: boolean; held: boolean }>`
      select pg_current_xact_id_if_assigned() is not null as assigned,
        exists (select 1 from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()
          and classid = ${appendLockNamespace} and objid = ${appendLockKey} and granted) as held`.execute(
      trx,
    );
    if (lockState[0]?.assigned && !lockState[0]?.held) throw new AppendNotFirstError(stream);
  }
  if (known !== "locked") {
    await sql`select pg_advisory_xact_lock(${appendLockNamespace}::int4, ${appendLockKey}::int4)`.execute(
      trx,
    );
  }

  // A new stream (every report's first chunk, every failure report) needs no read of the stream's
  // state: the claim below inserts nothing when the stream exists, and that is the refusal. One
  // round trip fewer for most appends of the intake, whose appends are serialised.
  let actual: bigint | null = null;
  let own: string | null = null;
  if (expected !== "no_stream") {
    // pg_current_xact_id() assigns this transaction's xid now, under the lock.
    const { rows } = await sql<StreamStateRow>`
      select s.revision::text as revision, pg_current_xact_id()::text as own
      from (values (1)) as one (x) left join streams s on s.stream = ${stream}`.execute(trx);
    const state = rows[0]!;
    actual = state.revision === null ? null : BigInt(state.revision);
    own = state.own;
    if (!satisfiesExpected(expected, actual)) throw new WrongExpectedVersionError(stream, expected, actual);
  }

  const first = actual === null ? 0n : actual + 1n;
  const last = first + BigInt(events.length) - 1n;
  // Conditional writes: correct on their own even for a writer that skipped the lock. The claim
  // goes with the first insert, in one statement: no claim, no events.
  const claim =
    actual === null
      ? sql`insert into streams (stream, revision) values (${stream}, ${String(last)}::bigint)
          on conflict (stream) do nothing returning 1`
      : sql`update streams set revision = ${String(last)}::bigint
          where stream = ${stream} and revision = ${String(actual)}::bigint returning 1`;

  let lastPosition = 0n;
  for (let offset = 0; offset < events.length; offset += eventsPerInsert) {
    const chunk = documents.slice(offset, offset + eventsPerInsert);
    const values = chunk.map(
      (event, index) => sql`(
        ${stream}, ${String(first + BigInt(offset + index))}::bigint, ${event.type}::text,
        ${event.data}::text, ${event.metadata}::text, ${event.id}::uuid)`,
    );
    // Rows take their sequence values in insert order, which the ORDER BY makes revision order.
    // The insert assigns the transaction's xid, under the lock, if the read above did not.
    const inserted =
      offset === 0
        ? await sql<{ position: string; own: string }>`
            with claim as (${claim})
            insert into events (stream, revision, type, data, metadata, id)
            select * from (values ${sql.join(values)}) as v (stream, revision, type, data, metadata, id)
            where exists (select 1 from claim)
            order by v.revision
            returning position::text as position, pg_current_xact_id()::text as own`.execute(trx)
        : await sql<{ position: string; own?: string }>`
            insert into events (stream, revision, type, data, metadata, id)
            values ${sql.join(values)}
            returning position::text as position`.execute(trx);
    if (offset === 0 && inserted.rows.length === 0) {
      throw new WrongExpectedVersionError(stream, expected, await currentRevision(trx, stream));
    }
    if (offset === 0) own ??= inserted.rows[0]!.own ?? null;
    for (const row of inserted.rows) {
      const position = BigInt(row.position);
      if (position > lastPosition) lastPosition = position;
    }
  }
  return {
    nextRevision: last,
    position: encodeGlobalPosition({ transactionId: BigInt(own!), position: lastPosition }),
  };
}

async function currentRevision(trx: QueryExecutorProvider, stream: string): Promise<bigint | null> {
  const { rows } = await sql<{ revision: string }>`
    select revision::text as revision from streams where stream = ${stream}`.execute(trx);
  return rows[0] ? BigInt(rows[0].revision) : null;
}

/** One new stream's first events, for appendNewStreamsWithin. */
export interface NewStreamAppend {
  stream: string;
  events: readonly NewEvent[];
}

/**
 * Creates several streams ("no stream" expected of each) with their first events in one statement,
 * inside the caller's transaction: for the intake's group commit, where each input's first append
 * is a new report's stream, and a statement per input was what its time went to. Each result is
 * the append's, or the WrongExpectedVersionError a single append would have thrown (the stream
 * exists). The streams must be distinct; the transaction's state is as for appendWithin.
 */
export async function appendNewStreamsWithin(
  trx: QueryExecutorProvider,
  appends: readonly NewStreamAppend[],
  known: KnownTransactionState = "unknown",
): Promise<(AppendResult | WrongExpectedVersionError)[]> {
  if (appends.length === 0) return [];
  if (new Set(appends.map((append) => append.stream)).size !== appends.length)
    throw new Error("appendNewStreamsWithin: the streams must be distinct");
  const total = appends.reduce((sum, append) => sum + append.events.length, 0);
  if (total > eventsPerInsert || known === "unknown") {
    // Past one statement's parameters, or in a transaction whose state must be checked first:
    // one by one (the first takes the lock, the next know it is held).
    const results: (AppendResult | WrongExpectedVersionError)[] = [];
    let state = known;
    for (const append of appends) {
      try {
        results.push(await appendWithin(trx, append.stream, append.events, "no_stream", state));
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError)) throw error;
        results.push(error);
      }
      state = "locked";
    }
    return results;
  }
  for (const append of appends) assertAppendable(append.stream, append.events);
  // Built before the lock is taken (serialised).
  const claims = appends.map(
    (append) => sql`(${append.stream}, ${String(append.events.length - 1)}::bigint)`,
  );
  let order = 0;
  const values = appends.flatMap((append) =>
    serialised(append.events).map(
      (event, revision) => sql`(
        ${append.stream}, ${String(revision)}::bigint, ${event.type}::text,
        ${event.data}::text, ${event.metadata}::text, ${event.id}::uuid, ${order++}::int)`,
    ),
  );
  if (known === "fresh") {
    await sql`select pg_advisory_xact_lock(${appendLockNamespace}::int4, ${appendLockKey}::int4)`.execute(
      trx,
    );
  }
  // Rows take their sequence values in insert order: the appends' order, each in revision order.
  const { rows } = await sql<{ stream: string; position: string; own: string }>`
    with claim as (
      insert into streams (stream, revision) values ${sql.join(claims)}
      on conflict (stream) do nothing returning stream)
    insert into events (stream, revision, type, data, metadata, id)
    select v.stream, v.revision, v.type, v.data, v.metadata, v.id
    from (values ${sql.join(values)}) as v (stream, revision, type, data, metadata, id, ord)
    where v.stream in (select stream from claim)
    order by v.ord
    returning stream, position::text as position, pg_current_xact_id()::text as own`.execute(trx);
  const last = new Map<string, bigint>();
  for (const row of rows) {
    const position = BigInt(row.position);
    if (position > (last.get(row.stream) ?? -1n)) last.set(row.stream, position);
  }
  const own = rows[0]?.own;
  const results: (AppendResult | WrongExpectedVersionError)[] = [];
  for (const append of appends) {
    const position = last.get(append.stream);
    results.push(
      position === undefined || own === undefined
        ? new WrongExpectedVersionError(append.stream, "no_stream", await currentRevision(trx, append.stream))
        : {
            nextRevision: BigInt(append.events.length - 1),
            position: encodeGlobalPosition({ transactionId: BigInt(own), position }),
          },
    );
  }
  return results;
}
