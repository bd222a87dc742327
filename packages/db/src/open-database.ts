import { Kysely, PostgresDialect } from "kysely";
import type { DatabaseConfig } from "./config.js";
import { lockDataDir } from "./data-dir-lock.js";
import { loadPGlite, loadPostgres, pgliteOptions } from "./drivers.js";
import { withEventLoopTurns } from "./event-loop-turns.js";
import { createPgliteDatabase } from "./pglite-initdb.js";

// int8 and numeric come back as strings from pg; PGlite's defaults differ. Both are read through
// explicit conversions (BigInt(), Number(), ::text) at the query sites, so no type parser is set here.

export interface Database<Schema = unknown> {
  readonly db: Kysely<Schema>;
  readonly config: DatabaseConfig;
  /** PGlite runs every query on one connection; work that needs parallel sessions must know. */
  readonly concurrentSessions: boolean;
  /** Returns a handle on the same connection(s) typed for another schema. */
  withSchema<Other>(): Kysely<Other>;
  /**
   * Cancels the statements running on this handle's connections now (pg_cancel_backend): a
   * stopping process that must not wait for a long query. Each fails with query_canceled (57014),
   * its transaction rolls back. Resolves to how many were asked to stop. PGlite runs a statement
   * on the process's own thread, so there is nothing running to cancel by the time this runs: 0.
   */
  cancelQueries(): Promise<number>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** PostgreSQL pool size. */
  maxConnections?: number;
  /**
   * Told when the server ends a connection (a restart, a failover, pg_terminate_backend), idle in
   * the pool or checked out. The statement in flight, if any, fails on its own; this is for logs.
   */
  onConnectionError?: (error: Error) => void;
  /** Opened for one command and closed again: see drivers.ts, pgliteOptions. */
  shortLived?: boolean;
  /**
   * PostgreSQL's statement_timeout for every statement on the pool (0 or absent: none), so that
   * no background query runs unbounded. Migrations run without it (migrateToLatest).
   */
  statementTimeoutMs?: number;
}

export async function openDatabase<Schema = unknown>(
  config: DatabaseConfig,
  options: OpenOptions = {},
): Promise<Database<Schema>> {
  switch (config.kind) {
    case "postgres": {
      const pg = await loadPostgres();
      const pool = new pg.Pool({
        connectionString: config.url,
        max: options.maxConnections ?? 10,
        // Our statements are short and planned afresh; compiling them (JIT) cost more than it saved:
        // 10 ms of a 17 ms lookup of a tenant's domains, whose row estimate looked large.
        options: `-c jit=off${options.statementTimeoutMs ? ` -c statement_timeout=${options.statementTimeoutMs}` : ""}`,
        // Waiting for a connection (the server down, or every pooled one busy) ends in an error
        // the caller can answer (503, retry), not in a request that hangs.
        connectionTimeoutMillis: 10_000,
        // A server that vanished without closing the socket (a failover, a cut link) is noticed.
        keepAlive: true,
      });
      // A connection the server ends must not crash the process. Its client reports it, whether
      // idle in the pool or checked out (a transaction between statements, a statement in
      // flight): without a listener there, node-postgres's 'error' event ends the process. The
      // statement fails on its own; the pool drops the broken client (at once when idle, when
      // released otherwise), and the next query opens a fresh connection. The pool repeats the
      // idle case on itself, where it must be heard too, and is told once, by the client.
      pool.on("connect", (client) => client.on("error", (error) => options.onConnectionError?.(error)));
      pool.on("error", () => {});
      // The connections checked out now: what a stop may have to cancel.
      const busy = new Set<{ processID?: number | null }>();
      pool.on("acquire", (client) => busy.add(client as { processID?: number | null }));
      pool.on("release", (_error, client) => busy.delete(client as { processID?: number | null }));
      const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
      return handle(
        db,
        config,
        true,
        async () => {
          await db.destroy();
        },
        () =>
          cancelBackends(
            pg,
            config.url,
            [...busy].map((client) => client.processID ?? 0),
          ),
      );
    }
    case "pglite": {
      const lock = lockDataDir(config.dataDir);
      try {
        await createPgliteDatabase(config.dataDir);
        const { PGlite, PGliteDialect } = await loadPGlite();
        const pglite = await PGlite.create(config.dataDir, await pgliteOptions(PGlite, options));
        const db = new Kysely<Schema>({ dialect: new PGliteDialect(withEventLoopTurns(pglite)) });
        return handle(db, config, false, async () => {
          // The dialect's destroy() closes PGlite itself.
          await db.destroy();
          lock.release();
        });
      } catch (error) {
        lock.release();
        throw error;
      }
    }
    case "pglite-memory": {
      const { PGlite, PGliteDialect } = await loadPGlite();
      const pglite = await PGlite.create();
      const db = new Kysely<Schema>({ dialect: new PGliteDialect(withEventLoopTurns(pglite)) });
      return handle(db, config, false, async () => {
        await db.destroy();
      });
    }
  }
}

/**
 * Asks the server, over a connection of its own (the pool's may all be busy), to cancel what the
 * given backends run. A backend that is idle by then is not affected.
 */
async function cancelBackends(
  pg: Awaited<ReturnType<typeof loadPostgres>>,
  url: string,
  pids: number[],
): Promise<number> {
  const backends = pids.filter((pid) => pid > 0);
  if (backends.length === 0) return 0;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on("error", () => {});
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      "select count(*) filter (where pg_cancel_backend(pid))::int as n from unnest($1::int[]) as pid",
      [backends],
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end().catch(() => {});
  }
}

function handle<Schema>(
  db: Kysely<Schema>,
  config: DatabaseConfig,
  concurrentSessions: boolean,
  closeOnce: () => Promise<void>,
  cancelQueries: () => Promise<number> = async () => 0,
): Database<Schema> {
  let closing: Promise<void> | null = null;
  return {
    db,
    config,
    concurrentSessions,
    withSchema: <Other>() => db as unknown as Kysely<Other>,
    cancelQueries,
    close: () => {
      closing ??= closeOnce();
      return closing;
    },
  };
}
