import { isDatabaseUnavailable, isStatementCancelled } from "@dmarc-ledger/db";
import type { Next } from "koa";
import { ApiError, bodyTooLarge } from "../api-error.js";
import type { ApiContext } from "../state.js";

/** Errors thrown by koa's own parts (body parser, router) carry an HTTP status; map the ones we know. */
function fromHttpError(
  error: { status?: number; message?: string; type?: string },
  maxBodyBytes: number,
): ApiError | null {
  switch (error.status) {
    case 400:
      return new ApiError(400, "invalid_body", "The request body could not be parsed.");
    case 413:
      // The body parser's: a chunked body past the limit. A Content-Length past it gets the same.
      return bodyTooLarge("Bodies", maxBodyBytes, "MAX_BODY_BYTES");
    case 415:
      return new ApiError(415, "unsupported_media_type", "Send form fields or JSON.");
    default:
      return null;
  }
}

/** Seconds a client is told to wait when the database is out of reach (a restart, a failover). */
const databaseRetryAfterSeconds = 2;

/**
 * A lost or refused database connection is passing: the contract's 503, with a retry hint. The
 * pool opens a fresh connection for the next request, so a retry usually succeeds. So is a
 * statement the server cancelled: past DATABASE_STATEMENT_TIMEOUT_MS, or by a stopping process.
 */
function fromDatabaseOutage(error: unknown): ApiError | null {
  const retry = { "Retry-After": String(databaseRetryAfterSeconds) };
  if (isDatabaseUnavailable(error))
    return new ApiError(
      503,
      "database_unavailable",
      "The database is unavailable for a moment; retry shortly.",
      retry,
    );
  if (isStatementCancelled(error))
    return new ApiError(
      503,
      "query_cancelled",
      "The database stopped this query (it ran past its time limit, or the service is stopping); retry shortly.",
      retry,
    );
  return null;
}

/**
 * Turns every failure into the contract's JSON error. Unexpected errors are logged with their
 * stack and answered with a request id to quote: no stack or message of ours leaks out.
 */
export async function errorHandler(ctx: ApiContext, next: Next): Promise<void> {
  try {
    await next();
  } catch (caught) {
    const outage = fromDatabaseOutage(caught);
    const known =
      caught instanceof ApiError
        ? caught
        : (outage ??
          fromHttpError(caught as { status?: number; message?: string }, ctx.deps.config.maxBodyBytes));
    const error =
      known ??
      new ApiError(
        500,
        "internal_error",
        `Something went wrong on our side. Quote request id ${ctx.state.requestId} when you report it.`,
      );
    if (outage)
      ctx.deps.logger.warn(
        { err: { message: (caught as Error).message }, requestId: ctx.state.requestId, path: ctx.path },
        `request failed: ${outage.code === "query_cancelled" ? "the query was cancelled" : "the database is unavailable"}`,
      );
    else if (!known)
      ctx.deps.logger.error(
        { err: caught, requestId: ctx.state.requestId, path: ctx.path },
        "request failed",
      );
    ctx.status = error.status;
    for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
    ctx.body = { status: "ERROR", code: error.code, message: error.message };
  }
}
