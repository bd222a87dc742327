import type { EventStore } from "@dmarc-ledger/event-store";
import type { EventMetadata, SafeSpfComputationFailed, SafeSpfRecordComputed } from "@dmarc-ledger/events";
import type { FlattenResult, SpfResolver } from "@dmarc-ledger/safe-spf";
import { flattenAndCheck } from "./flatten-and-check.js";
import { appendOutcome, computationFailed, readSafeSpfStream, recordComputed } from "./safe-spf-stream.js";

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
  const stream = await readSafeSpfStream(store, domain);
  const { submitted, previous, last } = stream;
  if (!submitted || !last) return { kind: "no_record" };
  if (!stream.answered) return { kind: "pending" };
  const answering = { ...stream, submitted };

  const unchanged = (result: FlattenResult) =>
    previous !== null && isSameRecord(previous, submitted.original, result);
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
    const { event, added, removed } = recordComputed(answering, result, options.metadata);
    if (!(await appendOutcome(store, stream, event))) return { kind: "superseded" };
    return { kind: "changed", minTtl: result.minTtl, added, removed };
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
  // The refresher retries every failure (with backoff); the worker's retry flag means DNS timeouts.
  const event = computationFailed(answering, outcome, outcome.code === "dns_timeout", options.metadata);
  if (!(await appendOutcome(store, stream, event))) return { kind: "superseded" };
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
