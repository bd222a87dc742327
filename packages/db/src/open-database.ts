import { Kysely, PostgresDialect } from "kysely";
import type { DatabaseConfig } from "./config.js";
import { lockDataDir } from "./data-dir-lock.js";
import { loadPGlite, loadPostgres, pgliteOptions } from "./drivers.js";
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
  close(): Promise<void>;
}

export interface OpenOptions {
  /** PostgreSQL pool size. */
  maxConnections?: number;
  /** Told when the server ends an idle pooled connection. */
  onIdleConnectionError?: (error: Error) => void;
  /** Opened for one command and closed again: see drivers.ts, pgliteOptions. */
  shortLived?: boolean;
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
        options: "-c jit=off",
      });
      // An idle connection the server ends (restart, failover) must not crash the process: the
      // pool drops it and the next query opens a fresh one.
      pool.on("error", (error) => options.onIdleConnectionError?.(error));
      const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
      return handle(db, config, true, async () => {
        await db.destroy();
      });
    }
    case "pglite": {
      const lock = lockDataDir(config.dataDir);
      try {
        await createPgliteDatabase(config.dataDir);
        const { PGlite, PGliteDialect } = await loadPGlite();
        const pglite = await PGlite.create(config.dataDir, await pgliteOptions(PGlite, options));
        const db = new Kysely<Schema>({ dialect: new PGliteDialect(pglite) });
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
      const db = new Kysely<Schema>({ dialect: new PGliteDialect(pglite) });
      return handle(db, config, false, async () => {
        await db.destroy();
      });
    }
  }
}

function handle<Schema>(
  db: Kysely<Schema>,
  config: DatabaseConfig,
  concurrentSessions: boolean,
  closeOnce: () => Promise<void>,
): Database<Schema> {
  let closing: Promise<void> | null = null;
  return {
    db,
    config,
    concurrentSessions,
    withSchema: <Other>() => db as unknown as Kysely<Other>,
    close: () => {
      closing ??= closeOnce();
      return closing;
    },
  };
}
