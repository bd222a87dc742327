import { type AnySchema, type Database, openDatabase, redactPassword } from "@dmarc-ledger/db";
import { type Kysely, sql } from "kysely";

/** A streaming replica the API reads its lists from. */
export interface ReadReplica {
  db: Kysely<AnySchema>;
  /** How long a read waits for its caller's last write to be replayed before reading the primary. */
  waitMs: number;
  close(): Promise<void>;
}

/**
 * Opens the replica and checks that it is one (in recovery, replaying a primary's WAL): a URL
 * that points at the primary, or at another server that takes writes, is refused at start.
 */
export async function openReadReplica(
  url: string,
  options: { waitMs: number; statementTimeoutMs?: number; onConnectionError?: (error: Error) => void },
): Promise<ReadReplica> {
  const database: Database = await openDatabase(
    { kind: "postgres", url },
    {
      ...(options.statementTimeoutMs ? { statementTimeoutMs: options.statementTimeoutMs } : {}),
      ...(options.onConnectionError ? { onConnectionError: options.onConnectionError } : {}),
    },
  );
  const db = database.withSchema<AnySchema>();
  try {
    const { rows } = await sql<{ recovering: boolean }>`select pg_is_in_recovery() as recovering`.execute(db);
    if (!rows[0]?.recovering)
      throw new Error(
        `DATABASE_REPLICA_URL (${redactPassword(url)}) is not a streaming replica: the server is not in recovery`,
      );
  } catch (error) {
    await database.close();
    if (error instanceof Error && error.message.startsWith("DATABASE_REPLICA_URL")) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `cannot connect to the replica of DATABASE_REPLICA_URL (${redactPassword(url)}): ${reason}`,
      {
        cause: error,
      },
    );
  }
  return { db, waitMs: options.waitMs, close: () => database.close() };
}

/**
 * Records that `caller` wrote and its write is in the read models now: the primary's WAL position
 * at this moment is past the commit of every batch that applied it. Its reads wait until a
 * replica has replayed this far.
 */
export async function markWrite(primary: Kysely<AnySchema>, caller: string): Promise<void> {
  await sql`insert into write_mark (caller, lsn, at) values (${caller}, pg_current_wal_lsn(), now())
    on conflict (caller) do update set lsn = excluded.lsn, at = excluded.at`.execute(primary);
}

/** Where a list read goes: the replica, or the primary when the replica is behind the caller's write. */
export interface ReadRoute {
  db: Kysely<AnySchema>;
  from: "replica" | "primary";
}

/**
 * The replica when it has replayed the caller's last write (or the caller wrote nothing yet);
 * otherwise waits for it up to the replica's `waitMs`, then gives the primary. A replica that
 * cannot be asked gives the primary too: reads go on while it is down.
 */
export async function routeRead(
  primary: Kysely<AnySchema>,
  replica: ReadReplica,
  caller: string | null,
): Promise<ReadRoute> {
  if (caller === null) return { db: replica.db, from: "replica" };
  const { rows } = await sql<{
    lsn: string;
  }>`select lsn::text from write_mark where caller = ${caller}`.execute(primary);
  const mark = rows[0]?.lsn;
  if (mark === undefined) return { db: replica.db, from: "replica" };
  const deadline = Date.now() + replica.waitMs;
  try {
    for (;;) {
      const replayed = await sql<{ caught_up: boolean | null }>`
        select pg_last_wal_replay_lsn() >= ${mark}::pg_lsn as caught_up`.execute(replica.db);
      if (replayed.rows[0]?.caught_up) return { db: replica.db, from: "replica" };
      if (Date.now() >= deadline) return { db: primary, from: "primary" };
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } catch {
    return { db: primary, from: "primary" };
  }
}

export interface ReplicaLag {
  /** WAL the replica has yet to replay, in bytes. */
  bytes: number;
  /**
   * Seconds since the primary committed the last transaction the replica replayed, while the
   * replica is behind; 0 when it has replayed everything.
   */
  seconds: number;
}

/** How far the replica is behind the primary. */
export async function replicaLag(
  primary: Kysely<AnySchema>,
  replica: Kysely<AnySchema>,
): Promise<ReplicaLag> {
  const { rows } = await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(primary);
  const { rows: lag } = await sql<{ bytes: string; seconds: number | null }>`
    select greatest(pg_wal_lsn_diff(${rows[0]!.lsn}::pg_lsn, pg_last_wal_replay_lsn()), 0)::text as bytes,
      extract(epoch from clock_timestamp() - pg_last_xact_replay_timestamp())::float8 as seconds`.execute(
    replica,
  );
  const bytes = Number(lag[0]!.bytes);
  return { bytes, seconds: bytes === 0 ? 0 : Math.max(0, lag[0]!.seconds ?? 0) };
}
