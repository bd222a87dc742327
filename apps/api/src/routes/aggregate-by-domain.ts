import { aggregateByDomain } from "@dmarc-ledger/read-models";
import type { Endpoint } from "../endpoints.js";
import { parseListParams } from "../params/list-params.js";

export const aggregateByDomainEndpoint: Endpoint = {
  name: "aggregate_by_domain",
  method: "GET",
  scope: "read",
  summary: "DMARC aggregate counters per policy domain over a period.",
  handler: async (ctx) => {
    const query = parseListParams(ctx.query, ctx.state.holder!.tenantId);
    const page = await aggregateByDomain(ctx.deps.db, query);
    ctx.body = { status: "SUCCESS", total: page.total, records: page.records };
  },
};
