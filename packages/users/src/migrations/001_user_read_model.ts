import type { Kysely } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
type AnyDb = Kysely<any>;

/** The users projection's tables: accounts, roles per tenant, and the people-and-keys trail. */
export const userReadModelMigration = {
  up: async (db: AnyDb) => {
    await db.schema
      .createTable("user_account")
      .addColumn("user_id", "text", (c) => c.primaryKey())
      .addColumn("email", "text", (c) => c.notNull().unique())
      .addColumn("created_at", "timestamptz", (c) => c.notNull())
      .addColumn("password_set", "boolean", (c) => c.notNull().defaultTo(false))
      .execute();
    await db.schema
      .createTable("user_role")
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("role", "text", (c) => c.notNull())
      .addColumn("granted_at", "timestamptz", (c) => c.notNull())
      .addColumn("last_sign_in_at", "timestamptz")
      .addPrimaryKeyConstraint("user_role_pk", ["user_id", "tenant_id"])
      .execute();
    await db.schema.createIndex("user_role_by_tenant").on("user_role").columns(["tenant_id"]).execute();
    await db.schema
      .createTable("tenant_activity")
      .addColumn("position", "numeric", (c) => c.primaryKey())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("event_type", "text", (c) => c.notNull())
      .addColumn("subject", "text", (c) => c.notNull())
      .addColumn("caused_by", "text", (c) => c.notNull())
      .addColumn("recorded_at", "timestamptz", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("tenant_activity_by_tenant")
      .on("tenant_activity")
      .columns(["tenant_id", "position"])
      .execute();
  },
};
