import { type RawBuilder, sql } from "kysely";

/**
 * "A row counts for a tenant when its policy_published/domain is one of the tenant's domains or a
 * subdomain of one." Reports are stored by domain, not by tenant, so a domain added later brings
 * the reports that arrived before it. The suffix test avoids LIKE, whose wildcards need escaping.
 */
export function belongsToTenant(tenantId: string, domainColumn: string): RawBuilder<boolean> {
  const column = sql.ref(domainColumn);
  return sql<boolean>`exists (select 1 from domain owned where owned.tenant_id = ${tenantId} and (${column} = owned.domain or right(${column}, length(owned.domain) + 1) = '.' || owned.domain))`;
}
