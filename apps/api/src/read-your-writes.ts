import { waitForProjections } from "@dmarc-ledger/projection-engine";
import type { ApiContext } from "./state.js";

/**
 * After a write, waits (briefly) until the projections show it, so that the caller's next read
 * sees its own write. A projector that is behind delays the answer, it does not fail the write.
 */
export async function awaitProjection(ctx: ApiContext, position: bigint | null): Promise<void> {
  if (position === null) return;
  const { db, projections, config } = ctx.deps;
  await waitForProjections(db, projections, position, config.readYourWritesTimeoutMs);
}
