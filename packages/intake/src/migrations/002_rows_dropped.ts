import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they change exists
type AnyDb = Kysely<any>;

/**
 * What an input's reports left out: `rows_dropped`, the rows in all (0 for inputs archived before,
 * and for failure reports and refusals), and `dropped`, JSON text of them by reason
 * (`[{"reason","rows","first"}]`), so that `where rows_dropped > 0` finds them.
 */
export const rowsDroppedMigration = {
  up: async (db: AnyDb) => {
    await db.schema
      .alterTable("raw_input")
      .addColumn("rows_dropped", "bigint", (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable("raw_input")
      .addColumn("dropped", "text", (c) => c.notNull().defaultTo("[]"))
      .execute();
  },
};
