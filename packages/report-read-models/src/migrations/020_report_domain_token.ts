import { type Kysely, sql } from "kysely";

/**
 * report_domain_token: one row, a token the report_domains projection replaces in the same
 * transaction as it adds a domain to report_domain (new domains only: a report for a known domain
 * leaves it). With the tenancy's domain_set_token it tells a reader that a tenant's report domains
 * are the ones it matched before (tenant-domain-filter.ts keeps them per process by the two).
 */
export const reportDomainToken = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("report_domain_token")
      .addColumn("single", "boolean", (c) => c.primaryKey().check(sql`single`))
      .addColumn("token", "text", (c) => c.notNull())
      .execute();
    // Report domains from before this table get the first token here.
    await sql`insert into report_domain_token (single, token)
      select true, gen_random_uuid()::text where exists (select from report_domain)`.execute(db);
  },
};
