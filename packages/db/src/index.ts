export type { AnySchema } from "./any-schema.js";
export { type ArrayElement, type ArrayElementType, arrayLiteral, arrayParam } from "./array-param.js";
export { type DatabaseConfig, databaseConfigFromEnv, describeDatabase, redactPassword } from "./config.js";
export { isDatabaseUnavailable, isStatementCancelled } from "./connection-errors.js";
export { DataDirLockedError, lockDataDir } from "./data-dir-lock.js";
export { MigrationFailedError, type MigrationSet, migrateToLatest } from "./migrations.js";
export { type Database, type OpenOptions, openDatabase } from "./open-database.js";
export { makePgliteTemplate, pgliteTemplateDir } from "./pglite-initdb.js";
export { type DatabaseSettings, databaseConfigFrom, databaseSettings } from "./settings.js";
