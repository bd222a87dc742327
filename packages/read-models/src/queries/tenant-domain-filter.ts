import { type RawBuilder, sql } from "kysely";

/**
 * The report domains that count for a tenant: those equal to one of the tenant's domains or
 * below one. Each report domain is split into its suffixes (a.b.example.com, b.example.com,
 * example.com, com) and the suffixes are joined to the tenant's domains by equality, so the
 * planner can hash the join; an OR of equality and suffix tests would compare every report
 * domain with every tenant domain.
 */
const tenantReportDomains = (tenantId: string) => sql`
  select r.domain from report_domain r
  cross join lateral generate_series(1, array_length(string_to_array(r.domain, '.'), 1)) as label(i)
  join domain owned on owned.tenant_id = ${tenantId}
    and owned.domain = array_to_string((string_to_array(r.domain, '.'))[label.i:], '.')`;

/**
 * "A row counts for a tenant when its policy_published/domain is one of the tenant's domains or a
 * subdomain of one." Reports are stored by domain, not by tenant, so a domain added later brings
 * the reports that arrived before it. The big tables are filtered with a hashed IN over the small
 * set of matching report domains (report_domain holds one row per domain ever reported).
 */
export function belongsToTenant(tenantId: string, domainColumn: string): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(domainColumn)} in (${tenantReportDomains(tenantId)})`;
}
