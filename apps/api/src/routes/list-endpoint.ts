import type { Page, PageQuery, QuerySchema } from "@dmarc-ledger/queries";
import { findDomain } from "@dmarc-ledger/tenancy";
import type { Kysely } from "kysely";
import type { Endpoint } from "../endpoints.js";
import { notYourDomain } from "../params/domain-param.js";
import { parseListParams } from "../params/list-params.js";

/**
 * A paginated GET endpoint over one read-model query. `total` is an integer on aggregate
 * endpoints and a decimal string on /forensic, as the spec has it.
 */
export function listEndpoint<Record>(options: {
  name: string;
  summary: string;
  query: (db: Kysely<QuerySchema>, query: PageQuery) => Promise<Page<Record>>;
  totalAsString?: boolean;
}): Endpoint {
  return {
    name: options.name,
    method: "GET",
    scope: "read",
    summary: options.summary,
    handler: async (ctx) => {
      const query = parseListParams(ctx.query, ctx.state.holder!.tenantId);
      if (
        query.domain !== undefined &&
        (await findDomain(ctx.deps.db, query.domain))?.tenantId !== query.tenantId
      ) {
        throw notYourDomain(query.domain);
      }
      const page = await options.query(ctx.deps.db, query);
      ctx.body = {
        status: "SUCCESS",
        total: options.totalAsString ? String(page.total) : page.total,
        records: page.records,
      };
    },
  };
}
