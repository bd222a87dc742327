import { sql } from "kysely";
import type { RankingScope } from "../source-rankings/ranking-scope.js";
import { inDomains, type TenantReportDomain } from "./tenant-domain-filter.js";

/** The condition on agg_source rows aliased `f` that are the tenant's (`domains`) and in the scope. */
export const tenantScopedFacts = (domains: readonly TenantReportDomain[], scope: RankingScope) =>
  sql`${inDomains(domains, "f.domain")}${scope === "unaligned" ? sql` and not f.dmarc_pass` : sql``}`;
