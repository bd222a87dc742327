import { parseSettings } from "@dmarc-ledger/config";
import {
  type AnySchema,
  type Database,
  type DatabaseConfig,
  databaseConfigFrom,
  describeDatabase,
  migrateToLatest,
  openDatabase,
  redactPassword,
} from "@dmarc-ledger/db";
import { createPostgresEventStore, type EventStore, eventStoreMigrations } from "@dmarc-ledger/event-store";
import { type Kysely, sql } from "kysely";
import { tableMigrations } from "./migration-sets.js";
import { runtimeSettings } from "./settings.js";

/** The database, event store and read models a process works on, as its environment selects them. */
export interface Runtime {
  database: Database;
  /** A handle on the database for every package: each sees it through its own tables. */
  db: Kysely<AnySchema>;
  store: EventStore;
  /** One line for a person: where data lives. */
  description: string;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** Overrides DATABASE_URL / DMARC_LEDGER_DATA_DIR. */
  database?: DatabaseConfig;
  /** Overrides EVENTSTORE_URL; null forces the PostgreSQL event store. */
  eventStoreUrl?: string | null;
  /** Opened for one command, not for a service: see OpenOptions.shortLived. */
  shortLived?: boolean;
  /** Told when the server ends a connection (OpenOptions.onConnectionError): for the log. */
  onConnectionError?: (error: Error) => void;
  /**
   * A running service (the API, the projector, intake, DNS, `start`), not a command: its
   * statements run under DATABASE_STATEMENT_TIMEOUT_MS, so that no query runs unbounded. A
   * command an operator runs (import, replay) has none.
   */
  service?: boolean;
}

/**
 * Opens everything on embedded defaults unless told otherwise: PGlite in ./data, whose tables hold
 * both the events and the read models; DATABASE_URL moves both to PostgreSQL; EVENTSTORE_URL moves
 * the events to KurrentDB.
 */
export async function openRuntime(
  env: NodeJS.ProcessEnv = process.env,
  options: RuntimeOptions = {},
): Promise<Runtime> {
  // Validated before anything is opened: a wrong variable must not leave a half-made data directory.
  const settings = parseSettings(runtimeSettings, env);
  const config = options.database ?? databaseConfigFrom(settings);
  const statementTimeoutMs = options.service ? settings.DATABASE_STATEMENT_TIMEOUT_MS : 0;
  const database = await openDatabase(config, {
    shortLived: options.shortLived ?? false,
    ...(statementTimeoutMs ? { statementTimeoutMs } : {}),
    ...(options.onConnectionError ? { onConnectionError: options.onConnectionError } : {}),
  });
  const db = database.withSchema<AnySchema>();
  try {
    if (config.kind === "postgres") await connectOnce(database, options.database ? null : "DATABASE_URL");
    const eventStoreUrl =
      options.eventStoreUrl === undefined ? settings.EVENTSTORE_URL : options.eventStoreUrl;
    // The read models and the raw archive live here whichever store holds the events. One call:
    // the sets already up to date are checked with one query.
    await migrateToLatest(database.db, ...tableMigrations, ...(eventStoreUrl ? [] : [eventStoreMigrations]));
    const store = eventStoreUrl
      ? (await import("@dmarc-ledger/event-store/kurrentdb")).createKurrentDbEventStore(eventStoreUrl)
      : createPostgresEventStore(database);
    return {
      database,
      db,
      store,
      description: `${describeDatabase(config)}; events in ${eventStoreUrl ? "KurrentDB" : "the same database"}`,
      async close() {
        await store.close();
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}

/**
 * The first connection, on its own: when it fails, the message names the variable (and the URL,
 * without its password) that pointed here, not only the socket's `connect ECONNREFUSED …`.
 */
async function connectOnce(database: Database, variable: string | null): Promise<void> {
  try {
    await sql`select 1`.execute(database.db);
  } catch (error) {
    const url = database.config.kind === "postgres" ? redactPassword(database.config.url) : "";
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `cannot connect to the PostgreSQL server of ${variable ?? "the database"} (${url}): ${reason}`,
      {
        cause: error,
      },
    );
  }
}
