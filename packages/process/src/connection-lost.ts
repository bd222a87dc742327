import type { Logger } from "pino";

/**
 * What a process logs when the database server ends one of its connections (a restart, a
 * failover, pg_terminate_backend): a warning, since the pool opens a fresh one for the next query
 * and the work in flight fails and is retried on its own.
 */
export function connectionLost(logger: Logger): (error: Error) => void {
  return (error) =>
    logger.warn(
      { reason: error.message, code: (error as { code?: unknown }).code },
      "a database connection was lost; the next query opens a new one",
    );
}
