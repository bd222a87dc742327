import { type Kysely, type Migration, type MigrationProvider, Migrator } from "kysely";

/**
 * Each package that owns tables (event store, read models) keeps its own ordered migrations and
 * its own bookkeeping table, so that packages can be migrated, and dropped, independently.
 */
export interface MigrationSet {
  /** Names the bookkeeping tables: `<name>_migration` and `<name>_migration_lock`. */
  name: string;
  /** Keys sort in the order they run: prefix them with a number ("001_events"). */
  migrations: Record<string, Migration>;
}

export class MigrationFailedError extends Error {
  override readonly name = "MigrationFailedError";
}

// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema, before it exists
export async function migrateToLatest(db: Kysely<any>, set: MigrationSet): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => set.migrations };
  const migrator = new Migrator({
    db,
    provider,
    migrationTableName: `${set.name}_migration`,
    migrationLockTableName: `${set.name}_migration_lock`,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === "Error")?.migrationName;
    throw new MigrationFailedError(
      `migration ${set.name}${failed ? `/${failed}` : ""} failed: ${(error as Error).message ?? String(error)}`,
      { cause: error },
    );
  }
}
