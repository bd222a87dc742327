import type { ApiContext } from "./state.js";

/**
 * The metadata every event a request appends carries: who caused it (the key or the person
 * signed in) and the request's id, so the audit trail ties each change to one call.
 */
export function callerMeta(ctx: ApiContext): { causedBy: string; correlationId: string } {
  return { causedBy: ctx.state.holder!.causedBy, correlationId: ctx.state.requestId };
}
