import type { AnySchema } from "@dmarc-ledger/db";
import type { Kysely } from "kysely";
import { processOwnerId } from "./leased-projector.js";
import { type HeldLease, releaseLease, renewLease, tryAcquireLease } from "./leases.js";

export interface LeasedJobOptions {
  db: Kysely<AnySchema>;
  /** The job's lease, `job:<name>`: one process of the deployment runs it at a time. */
  name: string;
  /** Starts the job; what it returns stops it (waiting for the work in hand). */
  start: () => { stop(): Promise<void> };
  owner?: string;
  /** How long the lease lasts unrenewed: how soon another process takes the job over. */
  leaseTtlMs?: number;
  onError?: (error: unknown) => void;
  /** Told when this process starts (true) or stops (false) running the job. */
  onRunning?: (running: boolean) => void;
}

export interface RunningLeasedJob {
  /** Whether this process runs the job now. */
  running(): boolean;
  stop(): Promise<void>;
}

/**
 * Runs a background job in one process of the deployment at a time (the Safe SPF process, the
 * source-IP resolver): every process that may run it asks for its lease every fifth of the
 * lease's time; the one that holds it runs the job and renews it, the others wait. When the
 * holder dies its lease runs out and another process starts the job. The job's effects are not
 * fenced by the lease (they are DNS queries and appends with an expected revision, safe to do
 * twice): for the moment between a paused holder's lease running out and it noticing, two may
 * run.
 */
export function runLeasedJob(options: LeasedJobOptions): RunningLeasedJob {
  const { db } = options;
  const owner = options.owner ?? processOwnerId();
  const ttlMs = options.leaseTtlMs ?? 5000;
  const tickMs = Math.max(50, Math.floor(ttlMs / 5));
  const name = `job:${options.name}`;
  let lease: HeldLease | null = null;
  let job: { stop(): Promise<void> } | null = null;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;

  const stopJob = async () => {
    const running = job;
    job = null;
    if (running) {
      await running.stop();
      options.onRunning?.(false);
    }
  };

  const tick = async () => {
    if (lease && !(await renewLease(db, lease, ttlMs))) {
      lease = null;
      await stopJob();
    }
    if (!lease) lease = await tryAcquireLease(db, name, owner, ttlMs);
    if (lease && !job && !stopped) {
      job = options.start();
      options.onRunning?.(true);
    }
  };

  let ticking: Promise<void> = Promise.resolve();
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
    running: () => job !== null,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await ticking;
      await stopJob();
      if (lease) await releaseLease(db, lease).catch(() => {});
      lease = null;
    },
  };
}
