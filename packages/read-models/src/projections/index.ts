import { aggregateByDomainProjection } from "./aggregate-by-domain.js";
import { domainsProjection } from "./domains.js";
import type { Projection } from "./projection.js";
import { tenantsProjection } from "./tenants.js";

export type { Projection } from "./projection.js";
export { aggregateByDomainProjection, domainsProjection, tenantsProjection };

export const allProjections: readonly Projection[] = [
  tenantsProjection,
  domainsProjection,
  aggregateByDomainProjection,
];
