import {
  type EventStore,
  type NewEvent,
  type RecordedEvent,
  WrongExpectedVersionError,
} from "@dmarc-ledger/event-store";
import {
  type EventMetadata,
  newEvent,
  type SafeSpfRecordComputed,
  type SpfOriginalUpdated,
  streams,
} from "@dmarc-ledger/events";
import { diffFlattenResults, type FlattenResult } from "@dmarc-ledger/safe-spf";

/**
 * A domain's stream as the first computation (the worker) and every refresh see it: its newest
 * original, what came of it, and the record a new one is told against. The one fold of both.
 */
export interface SafeSpfStream {
  domain: string;
  /** The newest original; null when the domain has none. */
  submitted: SpfOriginalUpdated | null;
  /** Some computation of the newest original was recorded: a record, or a failure. */
  answered: boolean;
  /** It was settled: a record, or a failure not to be retried. */
  settled: boolean;
  /** The last record computed (of any original): a new one's diff is against it. */
  previous: SafeSpfRecordComputed | null;
  /** The stream's last event: an append expects its revision. */
  last: RecordedEvent | null;
}

export async function readSafeSpfStream(store: EventStore, domain: string): Promise<SafeSpfStream> {
  const history = await store.readStream(streams.domain(domain));
  const lastOriginal = history.findLastIndex((event) => event.type === "SpfOriginalUpdated");
  const since = lastOriginal < 0 ? [] : history.slice(lastOriginal + 1);
  return {
    domain,
    submitted: lastOriginal < 0 ? null : (history[lastOriginal]!.data as SpfOriginalUpdated),
    answered: since.some(
      (event) => event.type === "SafeSpfRecordComputed" || event.type === "SafeSpfComputationFailed",
    ),
    settled: since.some(
      (event) =>
        event.type === "SafeSpfRecordComputed" ||
        (event.type === "SafeSpfComputationFailed" && !(event.data as { retrying: boolean }).retrying),
    ),
    previous:
      (history.findLast((event) => event.type === "SafeSpfRecordComputed")?.data as
        | SafeSpfRecordComputed
        | undefined) ?? null,
    last: history.at(-1) ?? null,
  };
}

/** SafeSpfRecordComputed for `result`, with its diff against the stream's previous record. */
export function recordComputed(
  stream: SafeSpfStream & { submitted: SpfOriginalUpdated },
  result: FlattenResult,
  metadata: EventMetadata,
): { event: NewEvent; added: string[]; removed: string[] } {
  // The diff needs the earlier result's networks only.
  const diff = diffFlattenResults(
    stream.previous ? ({ networks: stream.previous.networks } as FlattenResult) : null,
    result,
  );
  const { domain, submitted } = stream;
  const event = newEvent(
    "SafeSpfRecordComputed",
    {
      domain,
      tenantId: submitted.tenantId,
      original: submitted.original,
      records: result.records.map(({ name, value }) => ({ name, value })),
      lookupsBefore: result.lookupsBefore,
      lookupsAfter: result.lookupsAfter,
      networks: result.networks,
      ...diff,
      warnings: result.warnings,
      minTtl: result.minTtl,
    },
    metadata,
  );
  return { event, ...diff };
}

/** SafeSpfComputationFailed for the newest original. */
export function computationFailed(
  stream: SafeSpfStream & { submitted: SpfOriginalUpdated },
  failure: { code: string; message: string },
  retrying: boolean,
  metadata: EventMetadata,
): NewEvent {
  const { domain, submitted } = stream;
  return newEvent(
    "SafeSpfComputationFailed",
    {
      domain,
      tenantId: submitted.tenantId,
      original: submitted.original,
      code: failure.code,
      message: failure.message,
      retrying,
    },
    metadata,
  );
}

/**
 * Appends an outcome after the stream's last event as read: false when the stream moved meanwhile
 * (a newer original, another refresher), and the outcome is dropped.
 */
export async function appendOutcome(
  store: EventStore,
  stream: SafeSpfStream,
  event: NewEvent,
): Promise<boolean> {
  try {
    await store.append(streams.domain(stream.domain), [event], stream.last!.revision);
    return true;
  } catch (error) {
    if (error instanceof WrongExpectedVersionError) return false;
    throw error;
  }
}
