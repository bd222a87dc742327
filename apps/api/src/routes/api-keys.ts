import type { Scope } from "@dmarc-ledger/events";
import { allScopes, issueApiKey, readTenant, revokeApiKey, UnknownApiKeyError } from "@dmarc-ledger/tenancy";
import { ApiError, badParameter } from "../api-error.js";
import { callerMeta } from "../caller-meta.js";
import type { Endpoint } from "../endpoints.js";
import { optionalField, requiredField } from "../params/form-field.js";
import { parsePageParams } from "../params/page-params.js";
import { awaitProjection } from "../read-your-writes.js";

export const apiKeysEndpoint: Endpoint = {
  name: "api_keys",
  method: "GET",
  scope: "admin",
  summary: "This account's API keys: id, prefix, scopes, created, revoked (never the key).",
  handler: async (ctx) => {
    parsePageParams(ctx.query);
    const tenant = await readTenant(ctx.deps.store, ctx.state.holder!.tenantId);
    const records = [...tenant.keys].map(([keyId, key]) => ({
      KeyId: keyId,
      Prefix: key.keyPrefix,
      Scopes: key.scopes,
      Created: key.createdAt.toISOString(),
      Revoked: key.revokedAt?.toISOString() ?? null,
    }));
    ctx.body = { status: "SUCCESS", total: records.length, records };
  },
};

export const issueApiKeyEndpoint: Endpoint = {
  name: "issue_api_key",
  method: "PUT",
  scope: "admin",
  summary: "Issues an API key (form field scopes: read,write,ingest; default read); the key is shown once.",
  handler: async (ctx) => {
    const raw = optionalField(ctx, "scopes") ?? "read";
    const scopes = [...new Set(raw.split(",").map((scope) => scope.trim()))];
    if (scopes.length === 0 || scopes.some((scope) => !allScopes.includes(scope as Scope))) {
      throw badParameter("scopes", `must be a comma-separated list of ${allScopes.join(", ")}.`);
    }
    const issued = await issueApiKey(
      ctx.deps.store,
      { tenantId: ctx.state.holder!.tenantId, scopes: scopes as Scope[] },
      callerMeta(ctx),
    );
    await awaitProjection(ctx, issued.position);
    ctx.body = { status: "SUCCESS", key_id: issued.keyId, api_key: issued.apiKey, scopes };
  },
};

export const revokeApiKeyEndpoint: Endpoint = {
  name: "revoke_api_key",
  method: "PUT",
  scope: "admin",
  summary: "Revokes one of this account's API keys (form field key_id).",
  handler: async (ctx) => {
    const keyId = requiredField(ctx, "key_id");
    try {
      const outcome = await revokeApiKey(
        ctx.deps.store,
        { tenantId: ctx.state.holder!.tenantId, keyId },
        callerMeta(ctx),
      );
      await awaitProjection(ctx, outcome.status === "revoked" ? outcome.position : null);
    } catch (error) {
      if (error instanceof UnknownApiKeyError) {
        throw new ApiError(404, "unknown_key", "This account has no such API key.");
      }
      throw error;
    }
    ctx.body = { status: "SUCCESS" };
  },
};
