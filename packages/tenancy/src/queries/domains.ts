import type { Kysely } from "kysely";
import type { TenancySchema } from "../schema.js";

export interface OwnedDomain {
  domain: string;
  tenantId: string;
  group: string | null;
}

export async function findDomain(db: Kysely<TenancySchema>, domain: string): Promise<OwnedDomain | null> {
  const row = await db
    .selectFrom("domain")
    .select(["domain", "tenant_id", "group_name"])
    .where("domain", "=", domain)
    .executeTakeFirst();
  return row ? { domain: row.domain, tenantId: row.tenant_id, group: row.group_name } : null;
}

/**
 * Tenants' domains that hold no claim in their domain tree, oldest first: added before the tree
 * rule (a domain tree has one owner) existed, or between a claim and its catch-up.
 */
export async function listUnclaimedDomains(
  db: Kysely<TenancySchema>,
): Promise<{ domain: string; tenantId: string }[]> {
  const rows = await db
    .selectFrom("domain as d")
    .leftJoin("domain_claim as c", (join) =>
      join.onRef("c.domain", "=", "d.domain").onRef("c.tenant_id", "=", "d.tenant_id"),
    )
    .select(["d.domain", "d.tenant_id"])
    .where("c.domain", "is", null)
    .orderBy("d.added_at")
    .orderBy("d.domain")
    .execute();
  return rows.map((row) => ({ domain: row.domain, tenantId: row.tenant_id }));
}
