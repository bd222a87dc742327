import type { AnySchema } from "@dmarc-ledger/db";
import { type Kysely, type RawBuilder, sql } from "kysely";
import { type TenantReportDomain, tenantReportDomainsAndOwned } from "../tenant-domain-filter.js";

/** A report domain that counts for the tenant, with the tenant's domain it falls under. */
export interface OwnedReportDomain extends TenantReportDomain {
  owner: string;
}

/**
 * The tenant's report domains, each with the most specific of the tenant's domains equal to or
 * above it: sender records and approvals are per tenant's domain (a subdomain's mail is the
 * domain's), as PUT sender_approval takes them.
 */
export async function ownedReportDomains(
  handle: Kysely<AnySchema>,
  tenantId: string,
  within?: string,
): Promise<OwnedReportDomain[]> {
  const { reportDomains: domains, owned } = await tenantReportDomainsAndOwned(handle, tenantId, within);
  return domains.map((reported) => {
    let owner = reported.domain;
    for (let at = 0; at !== -1; at = reported.domain.indexOf(".", at) + 1 || -1) {
      if (owned.has(reported.domain.slice(at))) {
        owner = reported.domain.slice(at);
        break;
      }
    }
    return { ...reported, owner };
  });
}

/** "report-domain owner" pairs, sorted: what a sender ranking records of the tenant's domains. */
export const ownershipKey = (domains: readonly OwnedReportDomain[]): string[] =>
  domains.map((d) => `${d.domain} ${d.owner}`).sort();

/** The report domains joined to their owners: `join ${ownedDomainsTable(domains)} as d(domain, owner)`. */
export const ownedDomainsTable = (domains: readonly OwnedReportDomain[]): RawBuilder<unknown> =>
  sql`unnest(${domains.map((d) => d.domain)}::text[], ${domains.map((d) => d.owner)}::text[])`;
