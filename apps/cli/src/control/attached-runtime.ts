import { AsyncLocalStorage } from "node:async_hooks";
import type { Runtime } from "@dmarc-ledger/runtime";

/**
 * The running service's runtime, while it runs a command handed over its control socket: the
 * command uses it instead of opening the data directory, which the service holds.
 */
export const attachedRuntime = new AsyncLocalStorage<Runtime>();

/**
 * Aborts when the running service stops, while it runs a command handed over its control socket:
 * a long command (an import) ends early then, so that the service stops within STOP_TIMEOUT_MS.
 */
export const serviceStopping = new AsyncLocalStorage<AbortSignal>();
