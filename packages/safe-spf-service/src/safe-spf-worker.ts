import type { EventStore } from "@dmarc-ledger/event-store";
import { startCheckpointedWorker } from "@dmarc-ledger/projection-engine";
import type { SpfResolver } from "@dmarc-ledger/safe-spf";
import type { Kysely } from "kysely";
import { computeSafeSpf } from "./compute-safe-spf.js";
import type { SafeSpfSchema } from "./schema.js";

export interface SafeSpfWorkerOptions {
  store: EventStore;
  db: Kysely<SafeSpfSchema>;
  resolver: SpfResolver;
  publishZone?: string;
  /** How often computations that failed for a transient reason are tried again. */
  retryIntervalMs?: number;
  onError?: (error: unknown) => void;
}

export interface RunningSafeSpfWorker {
  stop(): Promise<void>;
}

/**
 * The Safe SPF process: reacts to every SpfOriginalUpdated (in order, from its checkpoint) by
 * computing the domain's Safe SPF records, and retries transient failures on a timer. The outcome
 * is appended with the expected revision, so a restart that sees an event again appends nothing.
 */
export function startSafeSpfWorker(options: SafeSpfWorkerOptions): RunningSafeSpfWorker {
  const { store, db, resolver } = options;
  const metadata = { causedBy: "process:safe-spf" };
  const compute = (domain: string) =>
    computeSafeSpf(store, domain, {
      resolver,
      metadata,
      ...(options.publishZone ? { publishZone: options.publishZone } : {}),
    });
  const worker = startCheckpointedWorker({
    store,
    db,
    name: "process:safe_spf",
    handles: new Set(["SpfOriginalUpdated"]),
    onEvents: async (events) => {
      for (const event of events) if (event.type === "SpfOriginalUpdated") await compute(event.data.domain);
    },
    ...(options.onError ? { onError: options.onError } : {}),
  });

  const retryTransient = async () => {
    const rows = await db.selectFrom("safe_spf").select("domain").where("retrying", "=", true).execute();
    for (const row of rows) await compute(row.domain);
  };
  const timer = setInterval(
    () => {
      retryTransient().catch((error) => options.onError?.(error));
    },
    options.retryIntervalMs ?? 5 * 60_000,
  );
  timer.unref();

  return {
    async stop() {
      clearInterval(timer);
      await worker.stop();
    },
  };
}
