import { waitForProjections } from "@dmarc-ledger/projection-engine";
import { markWrite, type ReadRoute, routeRead } from "@dmarc-ledger/read-replica";
import type { ApiContext } from "./state.js";

/**
 * After a write, waits (briefly) until the projections show it, so that the caller's next read
 * sees its own write. A projector that is behind delays the answer, it does not fail the write.
 * With a replica, the caller's mark is moved to the primary's WAL position once they do: its
 * reads, through any API process, wait for the replica to replay that far (readRoute).
 */
export async function awaitProjection(ctx: ApiContext, position: bigint | null): Promise<void> {
  if (position === null) return;
  const { db, projections, config } = ctx.deps;
  await waitForProjections(db, projections, position, config.readYourWritesTimeoutMs);
  const caller = ctx.state.holder?.causedBy;
  if (ctx.deps.replica && caller) await markWrite(db, caller);
}

/**
 * Where a list read goes: the primary without a replica; with one, the replica once it has
 * replayed the caller's last write (waiting up to REPLICA_WAIT_MS), else the primary.
 */
export async function readRoute(ctx: ApiContext): Promise<ReadRoute> {
  const { db, replica } = ctx.deps;
  if (!replica) return { db, from: "primary" };
  const route = await routeRead(db, replica, ctx.state.holder?.causedBy ?? null);
  ctx.deps.metrics?.listReads.inc({ from: route.from });
  return route;
}
