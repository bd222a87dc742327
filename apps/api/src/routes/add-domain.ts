import { addDomain, DomainOwnedElsewhereError, InvalidDomainError } from "@dmarc-ledger/tenancy";
import { ApiError } from "../api-error.js";
import { callerMeta } from "../caller-meta.js";
import type { Endpoint } from "../endpoints.js";
import { requiredField } from "../params/form-field.js";
import { awaitProjection } from "../read-your-writes.js";
import type { ApiContext } from "../state.js";

async function handleAddDomain(ctx: ApiContext): Promise<void> {
  const holder = ctx.state.holder!;
  const domain = requiredField(ctx, "domain");
  let added: boolean;
  try {
    const outcome = await addDomain(ctx.deps.store, { tenantId: holder.tenantId, domain }, callerMeta(ctx));
    added = outcome.status === "added";
    await awaitProjection(ctx, outcome.status === "added" ? outcome.position : null);
  } catch (error) {
    if (error instanceof InvalidDomainError) throw new ApiError(400, "invalid_domain", error.message);
    if (error instanceof DomainOwnedElsewhereError) throw new ApiError(409, "domain_taken", error.message);
    throw error;
  }
  // A repeat keeps the spec's SUCCESS; `added` tells the caller that nothing changed.
  ctx.body = { status: "SUCCESS", added };
}

/** The spec shows both spellings; both work. */
export const addDomainEndpoints: Endpoint[] = ["add-domain", "add_domain"].map((name) => ({
  name,
  method: "PUT",
  scope: "write",
  summary: "Adds a domain to the caller's account.",
  handler: handleAddDomain,
}));
