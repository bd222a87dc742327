import type { TenancySchema } from "@dmarc-ledger/tenancy";
import { type Kysely, sql } from "kysely";

/** The tenant id data keys use for personal data no tenant owns (a domain nobody added). */
export const noTenant = "-";

/**
 * The tenant whose domains a report's domain counts for: the owner of the domain or of its
 * nearest parent (as the tenant filter of the reads matches them), else noTenant.
 */
export async function tenantOfDomain(db: Kysely<TenancySchema>, domain: string): Promise<string> {
  const { rows } = await sql<{ tenant_id: string | null }>`select (${ownerOf(domain)}) as tenant_id`.execute(
    db,
  );
  return rows[0]?.tenant_id ?? noTenant;
}

/** The subquery of the owner of `domain` or of its nearest parent (null when none). */
export function ownerOf(domain: string) {
  const labels = domain.toLowerCase().replace(/\.$/, "").split(".");
  const candidates = labels.map((_, index) => labels.slice(index).join("."));
  return sql<string | null>`select tenant_id from domain where domain = any(${candidates}::text[])
    order by length(domain) desc limit 1`;
}
