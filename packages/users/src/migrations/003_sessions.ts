import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
type AnyDb = Kysely<any>;

/** Dashboard sessions, by their token's hash. */
export const sessionsMigration = {
  up: async (db: AnyDb) => {
    await db.schema
      .createTable("user_session")
      .addColumn("id_hash", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .addColumn("last_seen_at", "timestamptz", (c) => c.notNull())
      .addColumn("expires_at", "timestamptz", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("user_session_by_user").on("user_session").columns(["user_id"]).execute();
    await db.schema
      .createIndex("user_session_by_expiry")
      .on("user_session")
      .columns(["expires_at"])
      .execute();
  },
};
