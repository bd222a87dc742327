import {
  type Database,
  type DatabaseConfig,
  databaseConfigFromEnv,
  describeDatabase,
  migrateToLatest,
  openDatabase,
} from "@dmarc-ledger/db";
import { type EventStore, openPostgresEventStore } from "@dmarc-ledger/event-store";
import { intakeMigrations } from "@dmarc-ledger/ingestion";
import { type ReadModelSchema, readModelMigrations } from "@dmarc-ledger/read-models";
import type { Kysely } from "kysely";

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
  const config = options.database ?? databaseConfigFromEnv(env);
  const database = await openDatabase(config);
  const db = database.withSchema<ReadModelSchema>();
  try {
    await migrateToLatest(database.db, readModelMigrations);
    // The raw archive of every input lives beside the read models, whichever store holds events.
    await migrateToLatest(database.db, intakeMigrations);
    const eventStoreUrl = options.eventStoreUrl === undefined ? env.EVENTSTORE_URL : options.eventStoreUrl;
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
