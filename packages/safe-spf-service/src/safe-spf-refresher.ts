import { randomUUID } from "node:crypto";
import type { EventStore } from "@dmarc-ledger/event-store";
import type { SpfResolver } from "@dmarc-ledger/safe-spf";
import type { Kysely } from "kysely";
import { type RefreshOutcome, refreshSafeSpf } from "./refresh-safe-spf.js";
import {
  backoffMs,
  type CheckedDomain,
  type ClaimedDomain,
  claimDue,
  nextDue,
  recordChecked,
  recordFailed,
  recordPostponed,
  refreshDelayMs,
  releaseLeases,
  syncSchedule,
} from "./refresh-schedule.js";
import type { SafeSpfRefreshSettings } from "./refresh-settings.js";
import type { SafeSpfAndDomainSchema } from "./schema.js";

export interface SafeSpfRefresherOptions {
  store: EventStore;
  db: Kysely<SafeSpfAndDomainSchema>;
  /**
   * One resolver for every domain: its TTL cache and in-flight sharing are what make thousands of
   * domains that include the same provider cost one query per TTL.
   */
  resolver: SpfResolver;
  settings: SafeSpfRefreshSettings;
  publishZone?: string;
  /** Names this refresher's leases; default a random id (one per process start). */
  owner?: string;
  /** Domains leased per claim. */
  batchSize?: number;
  /** Domains computed at once: their lookups coalesce in the resolver. */
  concurrency?: number;
  /** Longest sleep between looks at the schedule (a newly computed record is picked up by then). */
  tickMs?: number;
  /** How long a claimed domain stays another refresher's if this one dies holding it. */
  leaseMs?: number;
  /** The first retry's wait after a failure; it doubles with every failure in a row. */
  retryBaseMs?: number;
  onError?: (error: unknown) => void;
  /** Told after every computation (logs, tests, the benchmark). */
  onRefreshed?: (domain: string, outcome: RefreshOutcome) => void;
}

export interface RunningSafeSpfRefresher {
  stop(): Promise<void>;
}

/**
 * Keeps every Safe SPF record current: recomputes a domain when the shortest TTL of the answers
 * its record was built from runs out (clamped to the settings), appends only changes and new
 * failures, and retries failures with exponential backoff while the last good record stays.
 * The schedule lives in the database (safe_spf_refresh, derived again from the read model when
 * missing), so a restart loses nothing and several refreshers share the work through leases.
 */
export function startSafeSpfRefresher(options: SafeSpfRefresherOptions): RunningSafeSpfRefresher {
  const { store, db, resolver, settings } = options;
  const owner = options.owner ?? `refresher:${randomUUID()}`;
  const batchSize = options.batchSize ?? 500;
  const concurrency = options.concurrency ?? 50;
  const tickMs = options.tickMs ?? 1000;
  const leaseMs = options.leaseMs ?? 120_000;
  const retryBaseMs = options.retryBaseMs ?? Math.min(30_000, settings.minRefreshMs);
  const metadata = { causedBy: "process:safe-spf-refresh" };

  let stopped = false;
  let wake: (() => void) | null = null;

  /** A success waits in `checked` for the batch's one update; onRefreshed hears of it after. */
  type Checked = CheckedDomain & { outcome: RefreshOutcome };

  async function refreshOne(claimed: ClaimedDomain, checked: Checked[]): Promise<void> {
    const startedAt = new Date();
    let outcome: RefreshOutcome;
    try {
      outcome = await refreshSafeSpf(store, claimed.domain, {
        resolver,
        metadata,
        knownFailure: claimed.failure,
        lastChecked: claimed.lastChecked,
        ...(options.publishZone ? { publishZone: options.publishZone } : {}),
      });
    } catch (error) {
      // The event store or the database, not DNS: try again after the backoff, keep the record.
      options.onError?.(error);
      const failures = claimed.failures + 1;
      const reason = `internal_error: ${error instanceof Error ? error.message : String(error)}`;
      await recordFailed(
        db,
        owner,
        claimed.domain,
        reason,
        new Date(),
        backoffMs(failures, retryBaseMs, settings),
      );
      return;
    }
    switch (outcome.kind) {
      case "changed":
      case "unchanged":
        checked.push({
          domain: claimed.domain,
          startedAt,
          delayMs: refreshDelayMs(outcome.minTtl, settings),
          outcome,
        });
        return;
      case "failed":
        await recordFailed(
          db,
          owner,
          claimed.domain,
          outcome.failure,
          new Date(),
          backoffMs(claimed.failures + 1, retryBaseMs, settings),
        );
        break;
      case "pending":
      case "superseded":
      case "no_record":
        // Someone else moved the stream: look again soon, from the stream as it is then.
        await recordPostponed(db, owner, claimed.domain, settings.minRefreshMs);
        break;
    }
    options.onRefreshed?.(claimed.domain, outcome);
  }

  async function refreshDue(): Promise<void> {
    await syncSchedule(db, settings);
    while (!stopped) {
      const claimed = await claimDue(db, owner, batchSize, leaseMs);
      if (claimed.length === 0) return;
      let next = 0;
      const checked: Checked[] = [];
      const worker = async () => {
        while (!stopped && next < claimed.length) await refreshOne(claimed[next++]!, checked);
      };
      try {
        await Promise.all(Array.from({ length: Math.min(concurrency, claimed.length) }, worker));
      } finally {
        await recordChecked(db, owner, checked);
      }
      for (const { domain, outcome } of checked) options.onRefreshed?.(domain, outcome);
    }
  }

  async function sleepUntilDue(): Promise<void> {
    let ms = tickMs;
    try {
      const due = await nextDue(db);
      if (due) ms = Math.max(20, Math.min(tickMs, due.getTime() - Date.now()));
    } catch (error) {
      options.onError?.(error);
    }
    // A stop that came while the next due time was read found no pause to cut short.
    if (stopped) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    wake = null;
  }

  const loop = (async () => {
    while (!stopped) {
      try {
        await refreshDue();
      } catch (error) {
        options.onError?.(error);
      }
      if (!stopped) await sleepUntilDue();
    }
  })();

  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      // Domains claimed but not started go back at once instead of waiting out the lease.
      await releaseLeases(db, owner).catch((error) => options.onError?.(error));
    },
  };
}
