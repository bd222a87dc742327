import { type EventStore, followStore } from "@dmarc-ledger/event-store";
import { decodeEvent } from "@dmarc-ledger/events";
import { type ReadModelSchema, readWorkerCheckpoint, writeWorkerCheckpoint } from "@dmarc-ledger/read-models";
import type { SpfResolver } from "@dmarc-ledger/safe-spf";
import type { Kysely } from "kysely";
import { computeSafeSpf } from "./compute-safe-spf.js";

/** Where the worker's checkpoint lives among the projections' (it is not one of them). */
const checkpointName = "process:safe_spf";

export interface SafeSpfWorkerOptions {
  store: EventStore;
  db: Kysely<ReadModelSchema>;
  resolver: SpfResolver;
  publishZone?: string;
  /** How often computations that failed for a transient reason are tried again. */
  retryIntervalMs?: number;
  onError?: (error: unknown) => void;
}

export interface RunningSafeSpfWorker {
  stop(): Promise<void>;
}

const readCheckpoint = (db: Kysely<ReadModelSchema>) => readWorkerCheckpoint(db, checkpointName);
const writeCheckpoint = (db: Kysely<ReadModelSchema>, position: bigint) =>
  writeWorkerCheckpoint(db, checkpointName, position);

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
  const follower = followStore({
    store,
    from: () => readCheckpoint(db),
    onBatch: async (batch) => {
      for (const recorded of batch) {
        // Decoding validates the whole payload: skip the report events before paying for it.
        if (recorded.type !== "SpfOriginalUpdated") continue;
        const event = decodeEvent(recorded);
        if (event?.type === "SpfOriginalUpdated") await compute(event.data.domain);
      }
      await writeCheckpoint(db, batch.at(-1)!.position);
    },
    ...(options.onError ? { onError: options.onError } : {}),
    maxBatch: 100,
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
      await follower.stop();
    },
  };
}
