import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
type AnyDb = Kysely<any>;

/**
 * Whose an input is, so that a tenant can list its own: the domains its reports name
 * (`raw_input_domain`, from the items the archive recorded, filled here for inputs archived
 * before), and the tenant that sent it through the API (`raw_input_receipt.tenant_id`).
 */
export const inputOwnersMigration = {
  up: async (db: AnyDb) => {
    await db.schema.alterTable("raw_input_receipt").addColumn("tenant_id", "text").execute();
    await sql`create index raw_input_receipt_by_tenant on raw_input_receipt (tenant_id, sha256)
      where tenant_id is not null`.execute(db);
    await db.schema
      .createTable("raw_input_domain")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("sha256", "text", (c) => c.notNull().references("raw_input.sha256"))
      .addPrimaryKeyConstraint("raw_input_domain_pk", ["domain", "sha256"])
      .execute();
    await sql`insert into raw_input_domain (domain, sha256)
      select distinct lower(item->>'domain'), sha256
      from raw_input, jsonb_array_elements(items::jsonb) as item
      where item->>'domain' is not null
      on conflict do nothing`.execute(db);
  },
};
