import { type EventStore, WrongExpectedVersionError } from "@dmarc-ledger/event-store";
import {
  type EventMetadata,
  newEvent,
  type SafeSpfComputationFailed,
  type SafeSpfRecordComputed,
  type SpfOriginalUpdated,
  streams,
} from "@dmarc-ledger/events";
import { diffFlattenResults, type FlattenResult, type SpfResolver } from "@dmarc-ledger/safe-spf";
import { flattenAndCheck } from "./flatten-and-check.js";

/**
 * - `changed`: a new record was appended (with its diff);
 * - `unchanged`: the same record again, nothing appended;
 * - `failed`: the last good record stays; `appended` says whether this failure was news;
 * - `pending`: the newest original has no outcome yet (the Safe SPF worker computes it first);
 * - `superseded`: the stream moved while computing (a new original, another refresher): nothing appended;
 * - `no_record`: the domain has no original.
 */
export type RefreshOutcome =
  | { kind: "changed"; minTtl: number | null; added: string[]; removed: string[] }
  | { kind: "unchanged"; minTtl: number | null }
  | { kind: "failed"; failure: string; appended: boolean }
  | { kind: "pending" }
  | { kind: "superseded" }
  | { kind: "no_record" };

export interface RefreshOptions {
  resolver: SpfResolver;
  publishZone?: string;
  metadata: EventMetadata;
  /**
   * The failure this domain's refreshes have been failing with since `lastChecked` (the last
   * success): the same again is a retry, not news, and appends nothing.
   */
  knownFailure: string | null;
  lastChecked: Date | null;
}

/** How a failure is told apart from another: its code and message. */
export const failureText = (failure: { code: string; message: string }) =>
  `${failure.code}: ${failure.message}`;

const sameRecords = (a: { name: string; value: string }[], b: { name: string; value: string }[]) =>
  a.length === b.length &&
  a.every((record, index) => record.name === b[index]!.name && record.value === b[index]!.value);

/**
 * Computes a domain's Safe SPF record again from its newest original and appends the outcome only
 * when it is news: a changed record with its diff, or a failure not already recorded since the
 * last success. Appends use the expected revision, so a refresher racing another (or the worker)
 * appends nothing twice.
 */
export async function refreshSafeSpf(
  store: EventStore,
  domain: string,
  options: RefreshOptions,
): Promise<RefreshOutcome> {
  const history = await store.readStream(streams.domain(domain));
  const lastOriginalIndex = history.findLastIndex((event) => event.type === "SpfOriginalUpdated");
  if (lastOriginalIndex < 0) return { kind: "no_record" };
  const answered = history
    .slice(lastOriginalIndex + 1)
    .some((event) => event.type === "SafeSpfRecordComputed" || event.type === "SafeSpfComputationFailed");
  if (!answered) return { kind: "pending" };
  const submitted = history[lastOriginalIndex]!.data as SpfOriginalUpdated;
  const previous = history.findLast((event) => event.type === "SafeSpfRecordComputed")?.data as
    | SafeSpfRecordComputed
    | undefined;
  const last = history.at(-1)!;
  const expected = last.revision;

  const unchanged = (result: FlattenResult) =>
    previous !== undefined && isSameRecord(previous, submitted.original, result);
  const outcome = await flattenAndCheck(
    domain,
    submitted.original,
    options.resolver,
    options.publishZone,
    (result) => !unchanged(result),
  );
  if ("result" in outcome) {
    const { result } = outcome;
    if (unchanged(result)) {
      return { kind: "unchanged", minTtl: result.minTtl };
    }
    const diff = diffFlattenResults(
      previous ? ({ networks: previous.networks } as FlattenResult) : null,
      result,
    );
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
      options.metadata,
    );
    if (!(await appended(store, domain, event, expected))) return { kind: "superseded" };
    return { kind: "changed", minTtl: result.minTtl, ...diff };
  }

  const failure = failureText(outcome);
  // Already told: by this refresher's earlier tries, or by an event (the worker's, or one whose
  // bookkeeping a crash lost) after the last success.
  const lastFailure =
    last.type === "SafeSpfComputationFailed" ? (last.data as SafeSpfComputationFailed) : null;
  const toldInStream =
    lastFailure !== null &&
    failureText(lastFailure) === failure &&
    (options.lastChecked === null || last.recordedAt >= options.lastChecked);
  if (failure === options.knownFailure || toldInStream) return { kind: "failed", failure, appended: false };
  const event = newEvent(
    "SafeSpfComputationFailed",
    {
      domain,
      tenantId: submitted.tenantId,
      original: submitted.original,
      code: outcome.code,
      message: outcome.message,
      // The refresher retries every failure (with backoff); the worker's retry flag means DNS timeouts.
      retrying: outcome.code === "dns_timeout",
    },
    options.metadata,
  );
  if (!(await appended(store, domain, event, expected))) return { kind: "superseded" };
  return { kind: "failed", failure, appended: true };
}

function isSameRecord(previous: SafeSpfRecordComputed, original: string, result: FlattenResult): boolean {
  return (
    previous.original === original &&
    previous.lookupsBefore === result.lookupsBefore &&
    previous.lookupsAfter === result.lookupsAfter &&
    sameRecords(previous.records, result.records) &&
    previous.networks.length === result.networks.length &&
    previous.networks.every((network, index) => network === result.networks[index])
  );
}

async function appended(
  store: EventStore,
  domain: string,
  event: ReturnType<typeof newEvent>,
  expected: bigint,
): Promise<boolean> {
  try {
    await store.append(streams.domain(domain), [event], expected);
    return true;
  } catch (error) {
    if (error instanceof WrongExpectedVersionError) return false;
    throw error;
  }
}
