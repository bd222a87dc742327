import type { TenancySchema } from "@dmarc-ledger/tenancy";
import { type Kysely, sql } from "kysely";

/** The tenant id data keys use for personal data no tenant owns (a domain nobody added). */
export const noTenant = "-";

/**
 * The tenant whose domains a report's domain counts for: the owner of the domain or of its
 * nearest parent (as the tenant filter of the reads matches them), else noTenant.
 */
export async function tenantOfDomain(db: Kysely<TenancySchema>, domain: string): Promise<string> {
  const labels = domain.toLowerCase().replace(/\.$/, "").split(".");
  const candidates = labels.map((_, index) => labels.slice(index).join("."));
  const row = await db
    .selectFrom("domain")
    .select("tenant_id")
    .where("domain", "in", candidates)
    .orderBy(sql`length(domain)`, "desc")
    .limit(1)
    .executeTakeFirst();
  return row?.tenant_id ?? noTenant;
}
