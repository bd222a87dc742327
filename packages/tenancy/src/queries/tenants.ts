import { type Kysely, sql } from "kysely";
import type { TenancySchema } from "../schema.js";

export interface TenantSummary {
  tenantId: string;
  name: string;
  region: string;
  createdAt: Date;
  activeKeys: number;
  domains: number;
}

/** Every tenant, oldest first, with its number of active keys and of domains (the admin listing). */
export async function listTenants(db: Kysely<TenancySchema>): Promise<TenantSummary[]> {
  const rows = await db
    .selectFrom("tenant as t")
    .select([
      "t.tenant_id",
      "t.name",
      "t.region",
      "t.created_at",
      sql<string>`(select count(*) from api_key k where k.tenant_id = t.tenant_id and not k.revoked)`.as(
        "active_keys",
      ),
      sql<string>`(select count(*) from domain d where d.tenant_id = t.tenant_id)`.as("domains"),
    ])
    .orderBy("t.created_at")
    .orderBy("t.tenant_id")
    .execute();
  return rows.map((row) => ({
    tenantId: row.tenant_id,
    name: row.name,
    region: row.region,
    createdAt: new Date(row.created_at),
    activeKeys: Number(row.active_keys),
    domains: Number(row.domains),
  }));
}

export interface TenantDomain {
  domain: string;
  tenantId: string;
  group: string | null;
  addedAt: Date;
}

/** Domains, alphabetical: of one tenant, or of every tenant. */
export async function listTenantDomains(
  db: Kysely<TenancySchema>,
  tenantId?: string,
): Promise<TenantDomain[]> {
  let query = db.selectFrom("domain").select(["domain", "tenant_id", "group_name", "added_at"]);
  if (tenantId !== undefined) query = query.where("tenant_id", "=", tenantId);
  const rows = await query.orderBy("domain").execute();
  return rows.map((row) => ({
    domain: row.domain,
    tenantId: row.tenant_id,
    group: row.group_name,
    addedAt: new Date(row.added_at),
  }));
}
