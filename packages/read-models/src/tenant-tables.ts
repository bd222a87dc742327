// The tables of tenants, their keys and domains: their projections, their queries and the
// catch-up, for the admin commands. Apart from the package's index, which loads every projection
// and with them the report parser, a tenth of a second of start-up that listing tenants never uses.
export { catchUp } from "./projection-engine.js";
export { domainsProjection } from "./projections/domains.js";
export { tenantsProjection } from "./projections/tenants.js";
export { listTenantDomains, listTenants, type TenantDomain, type TenantSummary } from "./queries/tenants.js";
