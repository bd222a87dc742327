import type { Logger } from "pino";

/**
 * Runs a start-up step of a process; when it fails (a wrong setting, a port in use, an
 * unreachable database) says why on stderr and exits 1, before anything else happens.
 */
export function exitOnStartFailure<T>(step: () => T): T {
  const fail = (error: unknown): never => {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  };
  try {
    const result = step();
    return (result instanceof Promise ? result.catch(fail) : result) as T;
  } catch (error) {
    return fail(error);
  }
}

/**
 * On SIGTERM or SIGINT: runs `stop` (stop accepting, finish what is in flight, close), then exits
 * 0; exits 1 when stopping fails or outlasts `limitMs`, so a supervisor never waits in vain.
 */
export function stopOnSignal(logger: Logger, stop: () => Promise<void>, limitMs = 9_500): void {
  let stopping = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, "stopping");
      setTimeout(() => {
        logger.error("stopping took too long; exiting");
        process.exit(1);
      }, limitMs).unref();
      stop().then(
        () => {
          logger.info("stopped");
          process.exit(0);
        },
        (error: unknown) => {
          logger.error({ err: error }, "stopping failed");
          process.exit(1);
        },
      );
    });
  }
}
