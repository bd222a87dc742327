import { parseSettings } from "@dmarc-ledger/config";
import {
  type Database,
  type DatabaseConfig,
  databaseConfigFrom,
  describeDatabase,
  migrateToLatest,
  openDatabase,
} from "@dmarc-ledger/db";
import { createPostgresEventStore, type EventStore, eventStoreMigrations } from "@dmarc-ledger/event-store";
// The subpath, not the index: that would load the report parser for a migration list.
import { intakeMigrations } from "@dmarc-ledger/ingestion/migrations";
import type { ReadModelSchema } from "@dmarc-ledger/read-models";
import { readModelMigrations } from "@dmarc-ledger/read-models/migrations";
import { usersMigrations } from "@dmarc-ledger/users/migrations";
import type { Kysely } from "kysely";
import { runtimeSettings } from "./settings.js";

/** The database, event store and read models a process works on, as its environment selects them. */
export interface Runtime {
  database: Database;
  db: Kysely<ReadModelSchema>;
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
  const database = await openDatabase(config, { shortLived: options.shortLived ?? false });
  const db = database.withSchema<ReadModelSchema>();
  try {
    const eventStoreUrl =
      options.eventStoreUrl === undefined ? settings.EVENTSTORE_URL : options.eventStoreUrl;
    // The raw archive of every input lives beside the read models, whichever store holds events.
    // One call: the sets already up to date are checked with one query.
    await migrateToLatest(
      database.db,
      readModelMigrations,
      intakeMigrations,
      usersMigrations,
      ...(eventStoreUrl ? [] : [eventStoreMigrations]),
    );
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
