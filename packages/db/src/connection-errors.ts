/**
 * Whether `error` says the database could not be reached or dropped the connection, rather than
 * that a statement was wrong: a restart, a failover, `pg_terminate_backend`, an idle-connection
 * reaper, a server that is not (yet) listening. Such a failure is passing: a request gets 503 with
 * a retry hint and a worker retries with backoff, where a wrong statement is a bug (500).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof AggregateError && error.errors.some(isDatabaseUnavailable)) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    // Class 08 (connection exception), 57P01-57P03 (admin shutdown, crash shutdown, cannot
    // connect now: starting up or shutting down) and 53300 (too many connections).
    if (code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03" || code === "53300")
      return true;
    if (unreachableErrnos.has(code)) return true;
  }
  return lostConnectionMessages.some((message) => error.message.includes(message));
}

/** Socket-level failures of connecting to, or talking with, the server. */
const unreachableErrnos = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** What node-postgres and its pool say, without a code, when a connection is gone or not to be had. */
const lostConnectionMessages = [
  "Connection terminated",
  "Client has encountered a connection error and is not queryable",
  "timeout exceeded when trying to connect",
  "Connection ended unexpectedly",
];

/** Whether `error` is PostgreSQL cancelling a statement: a statement timeout or pg_cancel_backend. */
export function isStatementCancelled(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === "57014";
}
