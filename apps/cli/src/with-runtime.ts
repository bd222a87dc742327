import type { Runtime } from "@dmarc-ledger/runtime";
import { attachedRuntime } from "./control/attached-runtime.js";
import { CliError } from "./io.js";

/**
 * Opens the runtime for one command and closes it afterwards, whatever happens; inside the
 * running service (a command handed over its control socket), uses the service's own.
 * `longRunning`: the service, or a command that may move many rows (import, reprocess, replay),
 * which keeps PGlite's full buffer cache; the short commands open short-lived (see
 * RuntimeOptions.shortLived).
 */
export async function withRuntime<T>(
  env: NodeJS.ProcessEnv,
  work: (runtime: Runtime) => Promise<T>,
  {
    longRunning = false,
    service = false,
    onConnectionError,
  }: { longRunning?: boolean; service?: boolean; onConnectionError?: (error: Error) => void } = {},
): Promise<T> {
  const attached = attachedRuntime.getStore();
  if (attached) return work(attached);
  // Embedded: PGlite's WebAssembly compiles on V8's worker threads while the modules below load
  // (its errors, if any, come from the open, which waits for it).
  if (!env.DATABASE_URL) {
    import("@dmarc-ledger/db/pglite-wasm").then(({ compiledPGliteWasm }) =>
      compiledPGliteWasm().catch(() => {}),
    );
  }
  // Loaded here, not at the top: commands that never open the database start without them.
  const [{ DataDirLockedError }, { openRuntime }] = await Promise.all([
    import("@dmarc-ledger/db"),
    import("@dmarc-ledger/runtime"),
  ]);
  let runtime: Runtime;
  try {
    runtime = await openRuntime(env, {
      shortLived: !longRunning,
      service,
      ...(onConnectionError ? { onConnectionError } : {}),
    });
  } catch (error) {
    if (error instanceof DataDirLockedError) {
      throw new CliError(
        `${error.message} (In embedded mode the running service holds the data directory and answers commands over its control socket; it did not answer. Stop it, or use DATABASE_URL.)`,
      );
    }
    throw error;
  }
  try {
    return await work(runtime);
  } finally {
    await runtime.close();
  }
}

/** withRuntime for a command that may move many rows: import, reprocess, replay. */
export function withBulkRuntime<T>(
  env: NodeJS.ProcessEnv,
  work: (runtime: Runtime) => Promise<T>,
): Promise<T> {
  return withRuntime(env, work, { longRunning: true });
}
