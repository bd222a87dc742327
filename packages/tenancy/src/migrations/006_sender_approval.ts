import type { Kysely } from "kysely";

export const senderApproval = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("sender_approval")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("sender", "text", (c) => c.notNull())
      .addColumn("approved", "boolean", (c) => c.notNull())
      .addPrimaryKeyConstraint("sender_approval_pk", ["domain", "kind", "sender"])
      .execute();
  },
};
