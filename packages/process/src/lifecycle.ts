import type { Logger } from "pino";
import { type StopProgress, stopProgress } from "./stop-progress.js";

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

export interface StopDeadline {
  /** STOP_TIMEOUT_MS: from the signal to the exit. */
  timeoutMs: number;
  /**
   * Cancels the database statements still running (Database.cancelQueries), so that the work
   * waiting on them fails and stops: called when the deadline nears and the stop is not done.
   */
  cancelQueries?: () => Promise<number>;
}

export class StopTimeoutError extends Error {
  override readonly name = "StopTimeoutError";
}

/** A process's stop: its parts run through `progress`, which names them when the deadline passes. */
export type StopFunction = (progress: StopProgress) => Promise<void>;

/**
 * Runs `stop` within the deadline. The last quarter of it (at most 2 s) is left for what
 * cancelling the running statements sets off: the transactions roll back, checkpoints stay where
 * they were, and the workers waiting on them stop. Rejects with StopTimeoutError at the deadline,
 * naming the parts of the stop still under way.
 */
export function stopWithin(logger: Logger, stop: StopFunction, deadline: StopDeadline): Promise<void> {
  const progress = stopProgress();
  const cancelAfterMs = deadline.timeoutMs - Math.min(2_000, deadline.timeoutMs / 4);
  const timers: NodeJS.Timeout[] = [];
  return new Promise<void>((resolve, reject) => {
    const cancel = deadline.cancelQueries;
    if (cancel) {
      timers.push(
        setTimeout(() => {
          cancel().then(
            (cancelled) => {
              if (cancelled > 0)
                logger.warn({ cancelled }, "stop deadline near: cancelled the running statements");
            },
            (error: unknown) => logger.warn({ err: error }, "cancelling the running statements failed"),
          );
        }, cancelAfterMs),
      );
    }
    timers.push(
      setTimeout(() => {
        const waiting = progress.waitingFor();
        const where = waiting.length > 0 ? ` (still stopping: ${waiting.join(" > ")})` : "";
        reject(new StopTimeoutError(`stopping took longer than ${deadline.timeoutMs} ms${where}`));
      }, deadline.timeoutMs),
    );
    stop(progress).then(resolve, reject);
  }).finally(() => {
    for (const timer of timers) clearTimeout(timer);
  });
}

/**
 * On SIGTERM or SIGINT: runs `stop` (stop accepting, finish what is in flight, close) within the
 * deadline (stopWithin), then exits 0; exits 1 when stopping fails or outlasts the deadline, so a
 * supervisor never waits in vain.
 */
export function stopOnSignal(logger: Logger, stop: StopFunction, deadline: StopDeadline): void {
  let stopping = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, "stopping");
      stopWithin(logger, stop, deadline).then(
        () => {
          logger.info("stopped");
          process.exit(0);
        },
        (error: unknown) => {
          if (error instanceof StopTimeoutError) logger.error(`${error.message}; exiting`);
          else logger.error({ err: error }, "stopping failed");
          process.exit(1);
        },
      );
    });
  }
}
