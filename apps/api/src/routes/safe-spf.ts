import { SpfSyntaxError } from "@dmarc-ledger/safe-spf";
import { type SafeSpfFreshness, safeSpfState, submitOriginalSpf } from "@dmarc-ledger/safe-spf-service";
import { DomainNotFoundError, findDomain } from "@dmarc-ledger/tenancy";
import { ApiError } from "../api-error.js";
import { callerMeta } from "../caller-meta.js";
import type { Endpoint } from "../endpoints.js";
import { domainParam, notYourDomain } from "../params/domain-param.js";
import { requiredField } from "../params/form-field.js";
import { awaitProjection } from "../read-your-writes.js";

export const updateSafeSpfEndpoint: Endpoint = {
  name: "update_safe_spf",
  method: "PUT",
  scope: "write",
  summary: "Stores a domain's original SPF record and runs the Safe SPF process on it.",
  handler: async (ctx) => {
    const holder = ctx.state.holder!;
    const domain = requiredField(ctx, "domain");
    const original = requiredField(ctx, "original");
    try {
      const position = await submitOriginalSpf(
        ctx.deps.store,
        { tenantId: holder.tenantId, domain, original },
        callerMeta(ctx),
      );
      await awaitProjection(ctx, position);
    } catch (error) {
      if (error instanceof DomainNotFoundError) throw notYourDomain(domain);
      if (error instanceof SpfSyntaxError) {
        throw new ApiError(422, "invalid_spf_record", `The SPF record is invalid: ${error.message}`);
      }
      throw error;
    }
    ctx.body = { status: "SUCCESS" };
  },
};

export const safeSpfEndpoint: Endpoint = {
  name: "safe_spf",
  method: "GET",
  scope: "read",
  summary: "A domain's Safe SPF state: original, published records, lookups, status, last error.",
  handler: async (ctx) => {
    const domain = domainParam(ctx.query);
    const state = await safeSpfState(ctx.deps.db, ctx.state.holder!.tenantId, domain);
    if (!state) {
      const owned = await findDomain(ctx.deps.db, domain);
      if (owned?.tenantId !== ctx.state.holder!.tenantId) throw notYourDomain(domain);
      ctx.body = { status: "SUCCESS", domain, safe_spf: null };
      return;
    }
    ctx.body = {
      status: "SUCCESS",
      domain,
      safe_spf: {
        original: state.original,
        status: state.status,
        records: state.records,
        lookups_before: state.lookupsBefore,
        lookups_after: state.lookupsAfter,
        warnings: state.warnings,
        last_computed: state.lastComputed,
        last_error: state.lastError,
        retrying: state.retrying,
        last_checked: state.lastChecked,
        next_check: state.nextCheck,
        refresh_state: state.freshness?.state ?? null,
        refresh: describeFreshness(state.freshness),
      },
    };
  },
};

/** The refresh state in words: "current", "stale since …", "failing: reason". */
function describeFreshness(freshness: SafeSpfFreshness | null): string | null {
  if (!freshness) return null;
  switch (freshness.state) {
    case "current":
      return "current";
    case "stale":
      return `stale since ${freshness.since}`;
    case "failing":
      return `failing: ${freshness.reason} (since ${freshness.since}${
        freshness.staleSince ? `; stale since ${freshness.staleSince}` : ""
      })`;
  }
}
