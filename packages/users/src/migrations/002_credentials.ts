import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
type AnyDb = Kysely<any>;

/** Password hashes and the one-time set-password links (their tokens' hashes only). */
export const credentialsMigration = {
  up: async (db: AnyDb) => {
    await db.schema
      .createTable("user_credential")
      .addColumn("user_id", "text", (c) => c.primaryKey())
      .addColumn("password_hash", "text", (c) => c.notNull())
      .addColumn("set_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema
      .createTable("user_password_link")
      .addColumn("token_hash", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull())
      // The user's stream is found by address: the link works before the read model shows them.
      .addColumn("email", "text", (c) => c.notNull())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("expires_at", "timestamptz", (c) => c.notNull())
      .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema
      .createIndex("user_password_link_by_user")
      .on("user_password_link")
      .columns(["user_id"])
      .execute();
  },
};
