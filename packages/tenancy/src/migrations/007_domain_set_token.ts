import { type Kysely, sql } from "kysely";

/**
 * domain_set_token: per tenant, a token the domains projection replaces in the same transaction
 * as every change to the tenant's rows of `domain` (added, removed, regrouped). A reader that
 * finds the token it saw before knows the tenant's domains are the ones it read then, without
 * reading them again (report-read-models keeps each tenant's report domains per process by it).
 */
export const domainSetToken = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("domain_set_token")
      .addColumn("tenant_id", "text", (c) => c.primaryKey())
      .addColumn("token", "text", (c) => c.notNull())
      .execute();
    // A tenant's domains from before this table get their first token here.
    await sql`insert into domain_set_token (tenant_id, token)
      select tenant_id, gen_random_uuid()::text from domain group by tenant_id`.execute(db);
  },
};
