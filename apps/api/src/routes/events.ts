import { setTimeout as sleep } from "node:timers/promises";
import {
  decodeCursor,
  encodeCursor,
  type FeedRequest,
  feedPositions,
  InvalidCursorError,
  readFeedEvents,
  toFeedEvents,
} from "@dmarc-ledger/event-feed";
import { personalDataPolicy } from "@dmarc-ledger/personal-data";
import { findDomain, normaliseDomain } from "@dmarc-ledger/tenancy";
import { badParameter } from "../api-error.js";
import type { Endpoint } from "../endpoints.js";
import { notYourDomain } from "../params/domain-param.js";
import type { ApiContext } from "../state.js";

const parameters = ["after", "limit", "wait", "domain", "before"];
export const maxWaitSeconds = 30;
/** How often a long poll looks for new events: well within the second a consumer may expect. */
const pollMs = 200;

function wholeNumber(
  query: Record<string, unknown>,
  name: string,
  min: number,
  max: number,
  fallback: number,
) {
  const raw = query[name];
  if (raw === undefined) return fallback;
  if (typeof raw !== "string") throw badParameter(name, "give it once.");
  if (!/^\d{1,6}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    const shown = raw.length > 40 ? `${raw.slice(0, 40)}…` : raw;
    throw badParameter(name, `must be a whole number from ${min} to ${max}, not "${shown}".`);
  }
  return Number(raw);
}

function cursor(query: Record<string, unknown>, name: string): bigint | null | undefined {
  const raw = query[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== "string") throw badParameter(name, "give it once.");
  try {
    return decodeCursor(raw);
  } catch (error) {
    if (error instanceof InvalidCursorError) throw badParameter(name, "is not a cursor this feed gave.");
    throw error;
  }
}

async function parseFeedRequest(ctx: ApiContext): Promise<FeedRequest & { waitMs: number }> {
  const query = ctx.query as Record<string, unknown>;
  for (const name of Object.keys(query)) {
    if (!parameters.includes(name)) throw badParameter(name, "is not a parameter of this endpoint.");
  }
  const tenantId = ctx.state.holder!.tenantId;
  const request: FeedRequest & { waitMs: number } = {
    tenantId,
    after: cursor(query, "after") ?? null,
    limit: wholeNumber(query, "limit", 1, 1000, 100),
    waitMs: wholeNumber(query, "wait", 0, maxWaitSeconds, 0) * 1000,
  };
  const before = cursor(query, "before");
  if (query.domain === undefined) {
    if (before !== undefined) throw badParameter("before", "comes with domain.");
    return request;
  }
  if (typeof query.domain !== "string") throw badParameter("domain", "give it once.");
  if (before === undefined || before === null) {
    throw badParameter("before", "is required with domain: the cursor of the event that brought the domain.");
  }
  let domain: string;
  try {
    domain = normaliseDomain(query.domain);
  } catch {
    throw notYourDomain(query.domain);
  }
  if ((await findDomain(ctx.deps.db, domain))?.tenantId !== tenantId) throw notYourDomain(domain);
  return { ...request, byDomain: { domain, before } };
}

/** Resolves when the client goes away, so that a long poll stops waiting for nobody. */
function clientGone(ctx: ApiContext): { gone: () => boolean } {
  let gone = false;
  ctx.req.once("close", () => {
    gone = true;
  });
  return { gone: () => gone || ctx.req.destroyed };
}

/**
 * GET events: the tenant's events in the store's order, as CloudEvents (docs/api.md, "Events").
 * With `wait`, an empty answer waits up to that many seconds for the next event.
 */
export const eventsEndpoint: Endpoint = {
  name: "events",
  method: "GET",
  scope: "read",
  summary:
    "Your events in the store's order, as CloudEvents 1.0, from a cursor; with wait, a long poll for the next ones.",
  handler: async (ctx) => {
    const request = await parseFeedRequest(ctx);
    const { db, store, dataKeys, config } = ctx.deps;
    const client = clientGone(ctx);
    const deadline = Date.now() + request.waitMs;
    let positions = await feedPositions(db, request);
    while (positions.length === 0 && !request.byDomain && Date.now() < deadline && !client.gone()) {
      await sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())));
      positions = await feedPositions(db, request);
    }
    const recorded = await readFeedEvents(store, positions);
    const events = await toFeedEvents(recorded, {
      source: config.publicBaseUrl,
      tenantId: request.tenantId,
      keys: dataKeys,
      keysHandle: db,
      redact: recorded.some((event) => event.type === "ForensicReportReceived")
        ? (await personalDataPolicy(db, request.tenantId)).redaction
        : true,
    });
    // After the last event read, which may be one the feed leaves out (a type this version
    // does not know): the cursor moves past it all the same.
    const last = recorded.at(-1)?.position ?? request.after;
    ctx.set("Cache-Control", "no-store");
    ctx.body = { status: "SUCCESS", events, next: encodeCursor(last) };
  },
};
