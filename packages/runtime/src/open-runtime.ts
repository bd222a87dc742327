import { parseSettings } from "@dmarc-ledger/config";
import {
  type Database,
  type DatabaseConfig,
  databaseConfigFrom,
  describeDatabase,
  migrateToLatest,
  openDatabase,
} from "@dmarc-ledger/db";
import { type EventStore, openPostgresEventStore } from "@dmarc-ledger/event-store";
import { intakeMigrations } from "@dmarc-ledger/ingestion";
import { type ReadModelSchema, readModelMigrations } from "@dmarc-ledger/read-models";
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
  const database = await openDatabase(config);
  const db = database.withSchema<ReadModelSchema>();
  try {
    await migrateToLatest(database.db, readModelMigrations);
    // The raw archive of every input lives beside the read models, whichever store holds events.
    await migrateToLatest(database.db, intakeMigrations);
    const eventStoreUrl =
      options.eventStoreUrl === undefined ? settings.EVENTSTORE_URL : options.eventStoreUrl;
    const store = eventStoreUrl
      ? (await import("@dmarc-ledger/event-store/kurrentdb")).createKurrentDbEventStore(eventStoreUrl)
      : await openPostgresEventStore(database);
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
