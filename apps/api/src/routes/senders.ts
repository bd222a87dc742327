import { aggregateBySender, senderApprovals, serviceMembers } from "@dmarc-ledger/queries";
import { DomainNotFoundError, InvalidSenderApprovalError, setSenderApproval } from "@dmarc-ledger/tenancy";
import { ApiError, badParameter } from "../api-error.js";
import type { Endpoint } from "../endpoints.js";
import { notYourDomain } from "../params/domain-param.js";
import { optionalField, requiredField } from "../params/form-field.js";
import { awaitProjection } from "../read-your-writes.js";
import type { ApiContext } from "../state.js";
import { listEndpoint } from "./list-endpoint.js";

export const aggregateBySenderEndpoint = listEndpoint({
  name: "aggregate_by_sender",
  summary:
    "Per domain and sending service (unknown sources by base domain, else AS): counters, alignment shares, source IPs, approval.",
  query: aggregateBySender,
});

/** `approved`: true or false (as JSON, or the words in a form), or null / "clear" to clear it. */
function approvedField(ctx: ApiContext): boolean | null {
  const body = (ctx.request as { body?: unknown }).body;
  const value = body && typeof body === "object" ? (body as Record<string, unknown>).approved : undefined;
  if (value === true || value === "true") return true;
  if (value === false || value === "false") return false;
  if (value === null || value === "null" || value === "clear") return null;
  throw badParameter("approved", 'must be "true", "false" or "clear".');
}

export const senderApprovalEndpoint: Endpoint = {
  name: "sender_approval",
  method: "PUT",
  scope: "write",
  summary:
    "Approves a sender for a domain, or marks it not approved, or clears the decision (form fields domain, service or range, approved).",
  handler: async (ctx) => {
    const holder = ctx.state.holder!;
    const domain = requiredField(ctx, "domain");
    const service = optionalField(ctx, "service") ?? null;
    const range = optionalField(ctx, "range") ?? null;
    const approved = approvedField(ctx);
    try {
      const position = await setSenderApproval(
        ctx.deps.store,
        { tenantId: holder.tenantId, domain, service, range, approved },
        { causedBy: holder.causedBy, correlationId: ctx.state.requestId },
        // The service's addresses as the primary's read models group them now: the decision
        // records them, and what the service gains later is told apart (GET sender_approvals).
        (owned, named) => serviceMembers(ctx.deps.db, holder.tenantId, owned, named),
      );
      await awaitProjection(ctx, position);
    } catch (error) {
      if (error instanceof DomainNotFoundError) throw notYourDomain(domain);
      if (error instanceof InvalidSenderApprovalError)
        throw new ApiError(400, "invalid_parameter", error.message);
      throw error;
    }
    ctx.body = { status: "SUCCESS" };
  },
};

export const senderApprovalsEndpoint = listEndpoint({
  name: "sender_approvals",
  summary:
    "The sender decisions in force per domain; for a service, its addresses when decided, with mail in the period now, and those added since.",
  query: senderApprovals,
});
