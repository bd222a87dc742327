import { randomUUID } from "node:crypto";
import type { AnySchema } from "@dmarc-ledger/db";
import type { EventStore } from "@dmarc-ledger/event-store";
import { releaseRetentionLease, takeRetentionLease } from "@dmarc-ledger/personal-data";
import { applyRetention } from "@dmarc-ledger/runtime/personal-data";
import type { Kysely } from "kysely";
import type { Logger } from "pino";

/** How long a run may hold the lease: past it, a run that died is taken over. */
const leaseMs = 10 * 60_000;
/** How often a process asks whether a run is due (it is once per RETENTION_INTERVAL_MS). */
const pollMs = 60_000;

export interface RetentionJob {
  /** Runs now if a run is due in the deployment (none in the last interval) and nobody runs it. */
  runIfDue(): Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * Retention in the background (docs/privacy.md): once per `intervalMs` in the deployment, however
 * many projectors run (a lease row, retention_lease), applyRetention for every tenant. A failed
 * run is logged and tried again at the next poll.
 */
export function startRetentionJob(options: {
  db: Kysely<AnySchema>;
  store: EventStore;
  logger: Logger;
  intervalMs: number;
}): RetentionJob {
  const holder = randomUUID();
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> = Promise.resolve();

  const run = async (intervalMs: number): Promise<boolean> => {
    if (!(await takeRetentionLease(options.db, holder, leaseMs, intervalMs))) return false;
    let ran = false;
    try {
      const removed = await applyRetention(options, new Date());
      for (const { event } of removed.scopes) {
        options.logger.info(
          {
            tenantId: event.tenantId,
            keysShredded: event.keysShredded.length,
            failureReports: event.removed.failureReports,
            rawInputs: event.removed.rawInputs,
          },
          "retention removed expired personal data",
        );
      }
      for (const { event } of removed.aggregates) {
        options.logger.info(
          {
            tenantId: event.tenantId,
            before: event.before,
            messages: event.removed.messages,
            rows: event.removed.rows,
          },
          "retention removed expired aggregate facts",
        );
      }
      ran = true;
    } finally {
      await releaseRetentionLease(options.db, holder, ran);
    }
    return true;
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(
      () => {
        running = run(options.intervalMs)
          .catch((error) => {
            if (!stopped) options.logger.error({ err: error }, "retention failed; trying again later");
          })
          .then(schedule);
      },
      Math.min(pollMs, options.intervalMs),
    );
  };
  schedule();
  return {
    runIfDue: () => run(options.intervalMs),
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
