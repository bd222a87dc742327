import { type RawBuilder, sql } from "kysely";

/**
 * "A row counts for a tenant when its policy_published/domain is one of the tenant's domains or a
 * subdomain of one." Reports are stored by domain, not by tenant, so a domain added later brings
 * the reports that arrived before it.
 *
 * The subdomain test runs over the small table of distinct report domains, never per row: the
 * big tables are then filtered by a hashed IN (a per-row OR of the suffix test made the planner
 * check every row against every domain of the tenant). The suffix test avoids LIKE, whose
 * wildcards would need escaping.
 */
export function belongsToTenant(tenantId: string, domainColumn: string): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(domainColumn)} in (
    select r.domain from report_domain r join domain owned on owned.tenant_id = ${tenantId}
      and (r.domain = owned.domain or right(r.domain, length(owned.domain) + 1) = '.' || owned.domain))`;
}
