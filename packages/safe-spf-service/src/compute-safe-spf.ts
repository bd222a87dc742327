import { type EventStore, WrongExpectedVersionError } from "@dmarc-ledger/event-store";
import {
  type EventMetadata,
  newEvent,
  type SafeSpfRecordComputed,
  type SpfOriginalUpdated,
  streams,
} from "@dmarc-ledger/events";
import { diffFlattenResults, type FlattenResult, type SpfResolver } from "@dmarc-ledger/safe-spf";
import { flattenAndCheck } from "./flatten-and-check.js";

export type ComputeOutcome = "computed" | "failed" | "retrying" | "superseded" | "already_done";

/** Failures worth trying again later: the DNS did not answer, not a problem of the record. */
const transient = new Set(["dns_timeout"]);

/**
 * Runs the Safe SPF process for the newest original of a domain and appends its outcome to the
 * domain's stream with the expected revision: if a newer original arrived meanwhile, nothing is
 * appended (that one will be computed), and a computation repeated after a crash appends nothing
 * twice.
 */
export async function computeSafeSpf(
  store: EventStore,
  domain: string,
  options: { resolver: SpfResolver; publishZone?: string; metadata: EventMetadata; force?: boolean },
): Promise<ComputeOutcome> {
  const history = await store.readStream(streams.domain(domain));
  const lastOriginalIndex = history.findLastIndex((event) => event.type === "SpfOriginalUpdated");
  if (lastOriginalIndex < 0) return "already_done";
  const submitted = history[lastOriginalIndex]!.data as SpfOriginalUpdated;
  const after = history.slice(lastOriginalIndex + 1);
  const doneAlready = after.some(
    (event) =>
      event.type === "SafeSpfRecordComputed" ||
      (event.type === "SafeSpfComputationFailed" && !(event.data as { retrying: boolean }).retrying),
  );
  if (doneAlready && !options.force) return "already_done";
  const previous = history.findLast((event) => event.type === "SafeSpfRecordComputed")?.data as
    | SafeSpfRecordComputed
    | undefined;
  const expected = history.at(-1)!.revision;

  const outcome = await flattenAndCheck(domain, submitted.original, options.resolver, options.publishZone);
  const event =
    "result" in outcome
      ? newEvent(
          "SafeSpfRecordComputed",
          {
            domain,
            tenantId: submitted.tenantId,
            original: submitted.original,
            records: outcome.result.records.map(({ name, value }) => ({ name, value })),
            lookupsBefore: outcome.result.lookupsBefore,
            lookupsAfter: outcome.result.lookupsAfter,
            networks: outcome.result.networks,
            ...diffFlattenResults(previous ? asFlattenResult(previous) : null, outcome.result),
            warnings: outcome.result.warnings,
            minTtl: outcome.result.minTtl,
          },
          options.metadata,
        )
      : newEvent(
          "SafeSpfComputationFailed",
          {
            domain,
            tenantId: submitted.tenantId,
            original: submitted.original,
            code: outcome.code,
            message: outcome.message,
            retrying: transient.has(outcome.code),
          },
          options.metadata,
        );
  try {
    await store.append(streams.domain(domain), [event], expected);
  } catch (error) {
    if (error instanceof WrongExpectedVersionError) return "superseded";
    throw error;
  }
  if ("result" in outcome) return "computed";
  return transient.has(outcome.code) ? "retrying" : "failed";
}

/** The diff needs the earlier result's networks only. */
function asFlattenResult(previous: SafeSpfRecordComputed): FlattenResult {
  return { networks: previous.networks } as FlattenResult;
}
