import { normaliseDomain } from "@dmarc-ledger/tenancy";
import { ApiError, badParameter } from "../api-error.js";
import { requiredQuery } from "./page-params.js";

export const notYourDomain = (domain: string) =>
  new ApiError(404, "unknown_domain", `${domain} is not one of your domains.`);

/**
 * The `domain` query parameter, normalised; only `allowed` other parameters may come with it.
 * A name that is not a valid domain cannot be the caller's: 404, as for any domain not theirs.
 */
export function domainParam(query: Record<string, unknown>, allowed: readonly string[] = []): string {
  for (const name of Object.keys(query)) {
    if (name !== "domain" && !allowed.includes(name))
      throw badParameter(name, "is not a parameter of this endpoint.");
  }
  const raw = requiredQuery(query, "domain");
  try {
    return normaliseDomain(raw);
  } catch {
    throw notYourDomain(raw);
  }
}
