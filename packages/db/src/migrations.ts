import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from "kysely";

/**
 * Each package that owns tables (event store, intake, projection engine, tenancy, …) keeps its
 * own ordered migrations and its own bookkeeping table, so that packages can be migrated, and
 * dropped, independently.
 */
export interface MigrationSet {
  /** Names the bookkeeping tables: `<name>_migration` and `<name>_migration_lock`. */
  name: string;
  /** Keys sort in the order they run: prefix them with a number ("001_events"). */
  migrations: Record<string, Migration>;
  /**
   * Where this set's tables were migrated before they moved to it (when a package was split):
   * for each of its migrations that another set ran first, that set's migration which did the
   * same work. See carryOver.
   */
  formerly?: { set: string; migrations: Readonly<Record<string, string>> };
}

export class MigrationFailedError extends Error {
  override readonly name = "MigrationFailedError";
}

/**
 * Brings each set up to date, in the order given. A set whose bookkeeping table already lists
 * exactly the migrations the code knows, in the order Kysely's Migrator would check, has nothing
 * to do and is left alone: one query reads the bookkeeping of every set, where the Migrator
 * introspects the catalog and takes its lock, set by set (most of a second on PGlite). Any other
 * set, pending, ahead of the code or different from it, goes to the Migrator, which runs what is
 * pending under its lock or refuses as it always did.
 */
// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema, before it exists
export async function migrateToLatest(db: Kysely<any>, ...sets: MigrationSet[]): Promise<void> {
  const executed = await executedMigrations(db, sets);
  for (const set of sets) {
    if (executed && sameMigrations(executed.get(set.name) ?? [], set)) continue;
    await runMigrator(db, set.formerly ? await carryOver(db, set, set.formerly) : set);
  }
}

/** A migration that does nothing: it stands for one whose work another set did here. */
const alreadyDone: Migration = { up: async () => {} };

/**
 * The set as the Migrator must run it on this database: while the set has recorded nothing of
 * its own, each of its migrations whose former migration ran here does nothing (its tables are
 * there), and is recorded as run like any other. The rest run as written, in the same Migrator
 * run and transaction, under its lock: two processes starting together run the set once. The
 * carried migrations are a prefix of the set's (its migrations keep the former order of the
 * tables they touch). The former set's bookkeeping is left as it was.
 */
async function carryOver(
  // biome-ignore lint/suspicious/noExplicitAny: see migrateToLatest
  db: Kysely<any>,
  set: MigrationSet,
  formerly: NonNullable<MigrationSet["formerly"]>,
): Promise<MigrationSet> {
  const former = await recordedNames(db, formerly.set);
  if (!former || former.length === 0) return set;
  const own = await recordedNames(db, set.name);
  if (own && own.length > 0) return set;
  const ranBefore = (name: string) => {
    const formerName = formerly.migrations[name];
    return formerName !== undefined && former.includes(formerName);
  };
  return {
    name: set.name,
    migrations: Object.fromEntries(
      Object.entries(set.migrations).map(([name, migration]) => [
        name,
        ranBefore(name) ? alreadyDone : migration,
      ]),
    ),
  };
}

/** The names of a set's executed migrations; null when its bookkeeping table does not exist. */
// biome-ignore lint/suspicious/noExplicitAny: see migrateToLatest
async function recordedNames(db: Kysely<any>, setName: string): Promise<string[] | null> {
  try {
    const { rows } = await sql<{
      name: string;
    }>`select name from ${sql.table(`${setName}_migration`)}`.execute(db);
    return rows.map((row) => row.name);
  } catch (error) {
    if ((error as { code?: unknown }).code === "42P01") return null;
    throw error;
  }
}

interface ExecutedMigration {
  name: string;
  timestamp: string;
}

/** Every set's executed migrations, read in one query; null while a bookkeeping table is missing. */
async function executedMigrations(
  // biome-ignore lint/suspicious/noExplicitAny: see migrateToLatest
  db: Kysely<any>,
  sets: MigrationSet[],
): Promise<Map<string, ExecutedMigration[]> | null> {
  if (sets.length === 0) return new Map();
  const selects = sets.map(
    (set) =>
      sql`select ${set.name}::text as set_name, name, "timestamp" from ${sql.table(`${set.name}_migration`)}`,
  );
  try {
    const { rows } = await sql<ExecutedMigration & { set_name: string }>`${sql.join(
      selects,
      sql` union all `,
    )}`.execute(db);
    const bySet = new Map<string, ExecutedMigration[]>();
    for (const row of rows) {
      const list = bySet.get(row.set_name) ?? [];
      list.push({ name: row.name, timestamp: row.timestamp });
      bySet.set(row.set_name, list);
    }
    return bySet;
  } catch (error) {
    // undefined_table: a set never migrated here (a new database, or a new set); the Migrator
    // creates its tables.
    if ((error as { code?: unknown }).code === "42P01") return null;
    throw error;
  }
}

/** Whether the Migrator would find the set complete: executed, in its order, exactly the code's. */
function sameMigrations(executed: ExecutedMigration[], set: MigrationSet): boolean {
  const known = Object.keys(set.migrations).sort();
  // The Migrator's order for executed migrations: by timestamp, then by name.
  const ordered = [...executed]
    .sort((a, b) =>
      a.timestamp === b.timestamp
        ? a.name.localeCompare(b.name)
        : new Date(a.timestamp).getTime() - new Date(b.timestamp).getTime(),
    )
    .map((migration) => migration.name);
  return ordered.length === known.length && ordered.every((name, index) => name === known[index]);
}

// biome-ignore lint/suspicious/noExplicitAny: see migrateToLatest
async function runMigrator(db: Kysely<any>, set: MigrationSet): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => withoutStatementTimeout(set.migrations) };
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

/**
 * A service's pool runs statements under a timeout (OpenOptions.statementTimeoutMs); a migration
 * (an index built over millions of rows) must not be cut by it. The Migrator runs each migration
 * in a transaction on PostgreSQL and PGlite alike, so a local setting ends with it.
 */
function withoutStatementTimeout(migrations: Record<string, Migration>): Record<string, Migration> {
  return Object.fromEntries(
    Object.entries(migrations).map(([name, migration]) => [
      name,
      {
        ...migration,
        // biome-ignore lint/suspicious/noExplicitAny: see migrateToLatest
        up: async (db: Kysely<any>) => {
          await sql`set local statement_timeout = 0`.execute(db);
          await migration.up(db);
        },
      },
    ]),
  );
}
