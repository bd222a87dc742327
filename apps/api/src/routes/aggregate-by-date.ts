import { aggregateByDate, tenantHasGroup } from "@dmarc-ledger/queries";
import { findDomain } from "@dmarc-ledger/tenancy";
import { ApiError } from "../api-error.js";
import type { Endpoint } from "../endpoints.js";
import { parseDateSeriesParams } from "../params/date-series-params.js";
import { notYourDomain } from "../params/domain-param.js";
import { answerOnce } from "./list-endpoint.js";

const unknownGroup = (group: string) =>
  new ApiError(404, "unknown_group", `None of your domains is in the group "${group}".`);

/**
 * GET aggregate_by_date: the counters and dispositions per UTC day, ISO week or calendar month of
 * the period, every bucket present. The buckets come from the period asked for, not from the
 * end the answer cache cuts to the newest fact: the trailing empty days are part of the answer.
 */
export const aggregateByDateEndpoint: Endpoint = {
  name: "aggregate_by_date",
  method: "GET",
  scope: "read",
  summary: "DMARC aggregate counters and dispositions per UTC day, ISO week or calendar month of a period.",
  handler: async (ctx) => {
    const { query, range } = parseDateSeriesParams(ctx.query, ctx.state.holder!.tenantId);
    const { db } = ctx.deps;
    if (query.domain !== undefined && (await findDomain(db, query.domain))?.tenantId !== query.tenantId) {
      throw notYourDomain(query.domain);
    }
    if (query.group !== undefined && !(await tenantHasGroup(db, query.tenantId, query.group))) {
      throw unknownGroup(query.group);
    }
    // The key holds the buckets (first day and count) and the period's end as answerOnce cuts it.
    const asked = { ...query, first: range.first, count: range.count };
    // The read models answerOnce routed to (the replica's, when there is one and it has the
    // caller's last write), which its kept answer's version was read from.
    await answerOnce(ctx, "aggregate_by_date", asked, async (_asked, readDb) => {
      const page = await aggregateByDate(readDb, query, range);
      return { status: "SUCCESS", total: page.total, records: page.records };
    });
  },
};
