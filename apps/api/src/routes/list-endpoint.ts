import type { AnySchema } from "@dmarc-ledger/db";
import { shredEpoch } from "@dmarc-ledger/personal-data";
import { readModelVersion } from "@dmarc-ledger/projection-engine";
import { newestFactTime, type Page, type PageQuery, type QuerySchema } from "@dmarc-ledger/queries";
import { findDomain } from "@dmarc-ledger/tenancy";
import type { Kysely } from "kysely";
import type { Endpoint } from "../endpoints.js";
import { notYourDomain } from "../params/domain-param.js";
import { type ListFilter, parseListParams } from "../params/list-params.js";
import { readRoute } from "../read-your-writes.js";
import type { ApiContext } from "../state.js";

/**
 * Answers a list request from the answer cache when the read models are as they were when it was
 * computed; otherwise computes it (once, for every request waiting for it) and keeps it. The key
 * is the endpoint and every parameter as parsed, the tenant among them: one tenant's answer is
 * never another's. A period's end past the newest fact stored is cut to it (newestFactTime): the
 * answer is the same, and a period ending "now" (the default) stays one question from second to
 * second.
 */
export async function answerOnce<Query extends { end: number }>(
  ctx: ApiContext,
  endpoint: string,
  query: Query,
  compute: (query: Query, db: Kysely<AnySchema>) => Promise<object>,
  sealedFields = false,
): Promise<void> {
  const { answers, metrics, projections } = ctx.deps;
  // The replica's or the primary's read models (readRoute); the version below is read from the
  // same, so a kept answer is one of the state it was computed from, wherever that was. Answers
  // that open sealed personal fields come from the primary only (a replica behind it could still
  // show what retention or an erasure removed a moment ago), kept under the shred epoch too: the
  // keys are deleted before the events that tell the projections, and an answer opened with a
  // deleted key must not outlive it.
  const { db } = sealedFields ? { db: ctx.deps.db } : await readRoute(ctx);
  ctx.type = "application/json";
  if (!answers?.enabled) {
    metrics?.answers.inc({ outcome: "off" });
    ctx.body = JSON.stringify(await compute(query, db));
    return;
  }
  const version = sealedFields
    ? `${await readModelVersion(db, projections)}/${await shredEpoch(db)}`
    : await readModelVersion(db, projections);
  const newest = await answers.once(version, () => newestFactTime(db));
  const asked = newest !== null && query.end > newest ? { ...query, end: newest } : query;
  const { body, outcome } = await answers.answer(
    `${endpoint}\u0000${JSON.stringify(asked)}`,
    version,
    async () => JSON.stringify(await compute(asked, db)),
  );
  metrics?.answers.inc({ outcome });
  ctx.body = body;
}

/**
 * A paginated GET endpoint over one read-model query. `total` is an integer on aggregate
 * endpoints and a decimal string on /forensic, as the spec has it.
 */
export function listEndpoint<Record>(options: {
  name: string;
  summary: string;
  query: (db: Kysely<QuerySchema>, query: PageQuery, ctx: ApiContext) => Promise<Page<Record>>;
  totalAsString?: boolean;
  /**
   * true: the answer holds personal data opened with data keys that retention or erasure may
   * shred between two requests (/forensic): see answerOnce.
   */
  sealedFields?: boolean;
  /** The filters it takes beside the contract's parameters (`sender`). */
  filters?: readonly ListFilter[];
}): Endpoint {
  return {
    name: options.name,
    method: "GET",
    scope: "read",
    summary: options.summary,
    handler: async (ctx) => {
      const query = parseListParams(ctx.query, ctx.state.holder!.tenantId, undefined, options.filters);
      if (
        query.domain !== undefined &&
        (await findDomain(ctx.deps.db, query.domain))?.tenantId !== query.tenantId
      ) {
        throw notYourDomain(query.domain);
      }
      const compute = async (asked: PageQuery, db: Kysely<AnySchema>) => {
        const page = await options.query(db, asked, ctx);
        return {
          status: "SUCCESS",
          total: options.totalAsString ? String(page.total) : page.total,
          records: page.records,
        };
      };
      await answerOnce(ctx, options.name, query, compute, options.sealedFields);
    },
  };
}
