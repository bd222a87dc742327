import type { PageQuery } from "@dmarc-ledger/queries";
import { normaliseDomain } from "@dmarc-ledger/tenancy";
import { badParameter } from "../api-error.js";
import { notYourDomain } from "./domain-param.js";

const thirtyDays = 30 * 24 * 60 * 60;
const allowed = new Set(["start", "end", "page", "per_page", "domain"]);

/**
 * One message for every wrong value, a sign, a fraction or a number out of range alike: what is
 * allowed, and what was given.
 */
function integer(name: string, raw: unknown, min: number, max: number, what = ""): number | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== "string") return invalid(name, "give it once.");
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const shown = raw.length > 40 ? `${raw.slice(0, 40)}…` : raw;
    return invalid(name, `must be ${what}a whole number from ${min} to ${max}, not "${shown}".`);
  }
  return value;
}

function invalid(name: string, message: string): never {
  throw badParameter(name, message);
}

/**
 * start/end/page/per_page of a list endpoint, per the contract: end defaults to now, start to end
 * minus 30 days, both inclusive; page from 1; per_page 1..1000, default 100; anything else is 400.
 * `domain` (ours) narrows the answer to one of the caller's domains and its subdomains' reports;
 * the caller checks that it is theirs.
 */
export function parseListParams(
  query: Record<string, unknown>,
  tenantId: string,
  nowSeconds = Math.floor(Date.now() / 1000),
  filters: readonly ListFilter[] = [],
): PageQuery {
  for (const name of Object.keys(query)) {
    if (!allowed.has(name) && !filters.includes(name as ListFilter))
      throw badParameter(name, "is not a parameter of this endpoint.");
  }
  const seconds = "a Unix time in seconds, ";
  const end = integer("end", query.end, 0, Number.MAX_SAFE_INTEGER, seconds) ?? nowSeconds;
  const start =
    integer("start", query.start, 0, Number.MAX_SAFE_INTEGER, seconds) ?? Math.max(0, end - thirtyDays);
  if (start > end) throw badParameter("start", "must not be after end.");
  const page = integer("page", query.page, 1, Number.MAX_SAFE_INTEGER) ?? 1;
  const perPage = integer("per_page", query.per_page, 1, 1000) ?? 100;
  const domain = domainFilter(query.domain);
  const sender = filters.includes("sender") ? senderFilter(query.sender) : undefined;
  return {
    tenantId,
    start,
    end,
    page,
    perPage,
    ...(domain === undefined ? {} : { domain }),
    ...(sender === undefined ? {} : { sender }),
  };
}

/** The filters some list endpoints take beside the contract's parameters. */
export type ListFilter = "sender";

/** `sender`: a sender's name as aggregate_by_sender's Service gives it, exactly. */
function senderFilter(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== "string" || raw === "" || raw.length > 1000)
    return invalid("sender", "give one sender's Service, as aggregate_by_sender names it, once.");
  return raw;
}

function domainFilter(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== "string" || raw === "") return invalid("domain", "give one domain, once.");
  try {
    return normaliseDomain(raw);
  } catch {
    throw notYourDomain(raw);
  }
}
