import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { type Follower, followStore } from "@dmarc-ledger/event-store";
import {
  extendFencedLeases,
  fenceLeases,
  forgetExpiredLeases,
  type HeldLease,
  liveLeases,
  releaseLease,
  renewLease,
  tryAcquireLease,
} from "./leases.js";
import type { Projection } from "./projection.js";
import {
  applyBatchWithin,
  lowestCheckpoint,
  type ProjectorOptions,
  waitForProjections,
} from "./projection-engine.js";

export interface LeasedProjectorOptions extends ProjectorOptions {
  /** This process's name among the projectors; unique by default (host, pid, random). */
  owner?: string;
  /** How long a lease lasts unrenewed: how soon another process takes over a dead one's work. */
  leaseTtlMs?: number;
  /** Told the projections this process runs, whenever they change. */
  onOwnership?: (projections: readonly string[]) => void;
}

export interface RunningLeasedProjector {
  /** Resolves once every projection (whoever runs it) has applied everything up to `position`. */
  waitFor(position: bigint, timeoutMs: number): Promise<boolean>;
  /** The projections this process runs now. */
  owned(): string[];
  /** Stops, and gives the leases back so that the others take over at once. */
  stop(): Promise<void>;
}

const projectionLease = (projection: string) => `projection:${projection}`;
const memberPrefix = "member:projector:";

/** A name for this process that no other process of the deployment has. */
export function processOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/**
 * The projector of one process among several: the projections are shared out through leases,
 * each run by one process at a time. Every process holds a member lease too, so that each takes
 * its fair share (the projections divided by the live members, rounded up) and gives back what
 * is above it when another process joins. A process that dies stops renewing: its leases run
 * out after `leaseTtlMs` and the others take its projections over from their checkpoints.
 *
 * Each batch is applied in one transaction that first renews (and so locks) the leases of the
 * projections it writes, checking they are still this process's with the token it took them
 * with, then moves the checkpoints: a process paused past its lease's end cannot write after the
 * new owner has, and a batch in flight holds off the takeover until it commits.
 */
export function startLeasedProjector(options: LeasedProjectorOptions): RunningLeasedProjector {
  const { store, db, projections } = options;
  const owner = options.owner ?? processOwnerId();
  const ttlMs = options.leaseTtlMs ?? 5000;
  const tickMs = Math.max(50, Math.floor(ttlMs / 5));
  const member = `${memberPrefix}${owner}`;
  const held = new Map<string, HeldLease>();
  let memberLease: HeldLease | null = null;
  let follower: Follower | null = null;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let ticking: Promise<void> = Promise.resolve();

  const ownedProjections = (): Projection[] => projections.filter((projection) => held.has(projection.name));

  const startFollower = () => {
    const running = ownedProjections();
    if (running.length === 0) return null;
    const leases = running.map((projection) => held.get(projection.name)!);
    return followStore({
      store,
      from: () => lowestCheckpoint(db, running),
      onBatch: (batch) =>
        db.transaction().execute(async (trx) => {
          await fenceLeases(trx, leases, ttlMs);
          await applyBatchWithin(trx, running, batch);
          await extendFencedLeases(trx, leases, ttlMs);
        }),
      ...(options.onError ? { onError: options.onError } : {}),
      maxBatch: options.maxBatch ?? 500,
    });
  };

  // Which projections, with which tokens: a lease lost and taken again (the database was away
  // past its expiry) has a new token, and the follower must fence its batches with that one.
  const holding = () =>
    [...held.values()]
      .map((lease) => `${lease.name}@${lease.token}`)
      .sort()
      .join();

  let ticks = 0;
  const tick = async () => {
    // About once a minute: the member rows of processes gone an hour ago.
    if (ticks++ % Math.max(1, Math.round(60_000 / tickMs)) === 0)
      await forgetExpiredLeases(db, memberPrefix, 3_600_000);
    const before = holding();
    memberLease =
      memberLease && (await renewLease(db, memberLease, ttlMs))
        ? memberLease
        : await tryAcquireLease(db, member, owner, ttlMs);
    for (const [name, lease] of held) {
      if (!(await renewLease(db, lease, ttlMs))) held.delete(name);
    }
    const members = Math.max(1, await liveLeases(db, memberPrefix));
    const share = Math.ceil(projections.length / members);
    const surplus = held.size > share ? [...held.keys()].slice(share) : [];
    if (surplus.length > 0) {
      // Given back between batches: the follower stops after the batch in flight.
      await follower?.stop();
      follower = null;
      for (const name of surplus) {
        await releaseLease(db, held.get(name)!);
        held.delete(name);
      }
    }
    for (const projection of projections) {
      if (held.size >= share) break;
      if (held.has(projection.name)) continue;
      const lease = await tryAcquireLease(db, projectionLease(projection.name), owner, ttlMs);
      if (lease) held.set(projection.name, lease);
    }
    const after = holding();
    if (after !== before || (follower === null && held.size > 0)) {
      await follower?.stop();
      follower = stopped ? null : startFollower();
      options.onOwnership?.([...held.keys()]);
    }
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      ticking = tick()
        .catch((error) => options.onError?.(error))
        .then(schedule);
    }, tickMs);
  };
  ticking = tick()
    .catch((error) => options.onError?.(error))
    .then(schedule);

  return {
    waitFor: (position, timeoutMs) => waitForProjections(db, projections, position, timeoutMs),
    owned: () => [...held.keys()],
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await ticking;
      await follower?.stop();
      follower = null;
      for (const lease of held.values()) await releaseLease(db, lease).catch(() => {});
      if (memberLease) await releaseLease(db, memberLease).catch(() => {});
      held.clear();
    },
  };
}
