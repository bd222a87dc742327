import { sql } from "kysely";
import type { RankingScope } from "../source-rankings/ranking-scope.js";
import { belongsToTenant } from "./tenant-domain-filter.js";

/** The condition on agg_source rows aliased `f` that are the tenant's and in the scope. */
export const tenantScopedFacts = (tenantId: string, scope: RankingScope) =>
  sql`${belongsToTenant(tenantId, "f.domain")}${scope === "unaligned" ? sql` and not f.dmarc_pass` : sql``}`;
