import type { TenancySchema } from "@dmarc-ledger/tenancy";
import { type Kysely, sql } from "kysely";

/**
 * The tenant id data keys use for personal data that names no domain and no tenant sent: a
 * rejected input that came by mail or import.
 */
export const noTenant = "-";

const normalised = (domain: string) => domain.toLowerCase().replace(/\.$/, "");

/**
 * The key scope of a report about a domain no tenant had added when it arrived: the domain's own,
 * so that the tenant that adds the domain later and asks for erasure can shred it too, without
 * touching anybody else's data.
 */
export function domainScope(domain: string): string {
  return `domain:${normalised(domain)}`;
}

/** The domain of a domainScope, or null for a tenant's id or noTenant. */
export function domainOfScope(scope: string): string | null {
  return scope.startsWith("domain:") ? scope.slice("domain:".length) : null;
}

/**
 * Whose key seals a report about `domain`: the owner of the domain or of its nearest parent (as
 * the tenant filter of the reads matches them), else the domain's own scope (domainScope).
 */
export async function tenantOfDomain(db: Kysely<TenancySchema>, domain: string): Promise<string> {
  const { rows } = await sql<{ tenant_id: string | null }>`select (${ownerOf(domain)}) as tenant_id`.execute(
    db,
  );
  return rows[0]?.tenant_id ?? domainScope(domain);
}

/** The subquery of the owner of `domain` or of its nearest parent (null when none). */
export function ownerOf(domain: string) {
  const labels = normalised(domain).split(".");
  const candidates = labels.map((_, index) => labels.slice(index).join("."));
  return sql<string | null>`select tenant_id from domain where domain = any(${candidates}::text[])
    order by length(domain) desc limit 1`;
}
