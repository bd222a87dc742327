import { personalDataPolicy } from "@dmarc-ledger/personal-data";
import {
  aggregateByDomain,
  aggregateByDomainGroup,
  aggregateByOrganization,
  aggregateBySource,
  aggregateByUnalignedSource,
  forensicReports,
} from "@dmarc-ledger/queries";
import { listEndpoint } from "./list-endpoint.js";

export const aggregateByDomainEndpoint = listEndpoint({
  name: "aggregate_by_domain",
  summary: "DMARC aggregate counters per policy domain over a period.",
  query: aggregateByDomain,
});

export const aggregateByDomainGroupEndpoint = listEndpoint({
  name: "aggregate_by_domain_group",
  summary: "DMARC aggregate counters per domain group (the group each domain is in now).",
  query: aggregateByDomainGroup,
});

export const aggregateByUnalignedSourceEndpoint = listEndpoint({
  name: "aggregate_by_unaligned_source",
  summary: "Per sending source, over the messages that did not pass DMARC.",
  query: (db, query) => aggregateByUnalignedSource(db, query),
  filters: ["sender"],
});

export const aggregateBySourceEndpoint = listEndpoint({
  name: "aggregate_by_source",
  summary: "Per sending source: policy domain, source IP and reporting organisation.",
  query: (db, query) => aggregateBySource(db, query),
  filters: ["sender"],
});

export const aggregateByOrganizationEndpoint = listEndpoint({
  name: "aggregate_by_organization",
  summary: "DMARC aggregate counters per reporting organisation.",
  query: aggregateByOrganization,
});

export const forensicEndpoint = listEndpoint({
  name: "forensic",
  summary: "The DMARC failure (forensic) reports that arrived in the period, newest first.",
  query: async (db, query, ctx) =>
    forensicReports(db, query, {
      keys: ctx.deps.dataKeys,
      redact: (await personalDataPolicy(ctx.deps.db, query.tenantId)).redaction,
    }),
  totalAsString: true,
  sealedFields: true,
});
