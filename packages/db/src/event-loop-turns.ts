import { setImmediate as nextTurn } from "node:timers/promises";
import type { PGlite } from "@electric-sql/pglite";

/**
 * How long PGlite's queries may hold the event loop before the next one waits for a turn of it.
 * A PGlite statement runs on this thread, in WebAssembly, synchronously: work that goes from one
 * query to the next without any other I/O (an import of many small files, read at once) chains
 * them through promise callbacks, and the loop never reaches its I/O phase. An import of 2,000
 * files handed to the running service held it for 10.5 s at a stretch (--cpu-prof): /healthz
 * went unanswered and SIGTERM unheard that long.
 */
export const maxHeldMs = 20;

/**
 * `pglite` for the kysely dialect (which calls `query` and `close` only), with its queries
 * giving the event loop a turn (setImmediate: after its I/O phase, so accepted connections,
 * requests and signals are handled) once it has been held for `heldMs`. A turn the loop takes by
 * itself (real I/O between queries) counts: the cost is one setImmediate per `heldMs` of work.
 */
export function withEventLoopTurns(pglite: PGlite, heldMs = maxHeldMs): PGlite {
  // When the loop last had a turn that we know of, and whether one is being watched for.
  let lastTurn = performance.now();
  let watching = false;
  const watchForTurn = () => {
    if (watching) return;
    watching = true;
    setImmediate(() => {
      watching = false;
      lastTurn = performance.now();
    });
  };
  const query: PGlite["query"] = async (...args) => {
    if (performance.now() - lastTurn > heldMs) {
      await nextTurn();
      lastTurn = performance.now();
    }
    watchForTurn();
    return pglite.query(...args);
  };
  return new Proxy(pglite, {
    get(target, property) {
      if (property === "query") return query;
      // On the instance itself: its getters and methods reach its private fields.
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
