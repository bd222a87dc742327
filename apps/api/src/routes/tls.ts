import { tenantHasGroup, tlsByDate, tlsByDomain, tlsFailures } from "@dmarc-ledger/queries";
import { findDomain } from "@dmarc-ledger/tenancy";
import { ApiError } from "../api-error.js";
import type { Endpoint } from "../endpoints.js";
import { parseDateSeriesParams } from "../params/date-series-params.js";
import { notYourDomain } from "../params/domain-param.js";
import { answerOnce, listEndpoint } from "./list-endpoint.js";

/** SMTP TLS reports (RFC 8460): the sessions per policy domain and policy type. */
export const tlsByDomainEndpoint = listEndpoint({
  name: "tls_by_domain",
  summary: "SMTP TLS report sessions (RFC 8460) per policy domain and policy type over a period.",
  query: tlsByDomain,
});

/** SMTP TLS reports' failure details, summed per key. */
export const tlsFailuresEndpoint = listEndpoint({
  name: "tls_failures",
  summary:
    "Failed SMTP TLS sessions per policy domain, policy type, result type, sending MTA, receiving MX and address, and reporter.",
  query: tlsFailures,
});

/** The daily series of SMTP TLS sessions, as aggregate_by_date's (every bucket present). */
export const tlsByDateEndpoint: Endpoint = {
  name: "tls_by_date",
  method: "GET",
  scope: "read",
  summary: "SMTP TLS report sessions per UTC day, ISO week or calendar month of a period.",
  handler: async (ctx) => {
    const { query, range } = parseDateSeriesParams(ctx.query, ctx.state.holder!.tenantId);
    const { db } = ctx.deps;
    if (query.domain !== undefined && (await findDomain(db, query.domain))?.tenantId !== query.tenantId) {
      throw notYourDomain(query.domain);
    }
    if (query.group !== undefined && !(await tenantHasGroup(db, query.tenantId, query.group))) {
      throw new ApiError(404, "unknown_group", `None of your domains is in the group "${query.group}".`);
    }
    const asked = { ...query, first: range.first, count: range.count };
    await answerOnce(ctx, "tls_by_date", asked, async (_asked, readDb) => {
      const page = await tlsByDate(readDb, query, range);
      return { status: "SUCCESS", total: page.total, records: page.records };
    });
  },
};
