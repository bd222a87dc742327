import type { Kysely } from "kysely";
import type { ReadModelSchema } from "../schema.js";

export interface OwnedDomain {
  domain: string;
  tenantId: string;
  group: string | null;
}

export async function findDomain(db: Kysely<ReadModelSchema>, domain: string): Promise<OwnedDomain | null> {
  const row = await db
    .selectFrom("domain")
    .select(["domain", "tenant_id", "group_name"])
    .where("domain", "=", domain)
    .executeTakeFirst();
  return row ? { domain: row.domain, tenantId: row.tenant_id, group: row.group_name } : null;
}

export async function listTenantDomains(
  db: Kysely<ReadModelSchema>,
  tenantId: string,
): Promise<OwnedDomain[]> {
  const rows = await db
    .selectFrom("domain")
    .select(["domain", "tenant_id", "group_name"])
    .where("tenant_id", "=", tenantId)
    .orderBy("domain")
    .execute();
  return rows.map((row) => ({ domain: row.domain, tenantId: row.tenant_id, group: row.group_name }));
}
