import type { Kysely } from "kysely";

export const domainClaim = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    // Filled by the domain-claims projection from the first event (a new projection
    // catches up from the start), so domains added before the tree rule show unclaimed.
    await db.schema
      .createTable("domain_claim")
      .addColumn("domain", "text", (c) => c.primaryKey())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .execute();
  },
};
