import type { EventStore } from "@dmarc-ledger/event-store";
import type { EventMetadata } from "@dmarc-ledger/events";
import type { SpfResolver } from "@dmarc-ledger/safe-spf";
import { flattenAndCheck } from "./flatten-and-check.js";
import { appendOutcome, computationFailed, readSafeSpfStream, recordComputed } from "./safe-spf-stream.js";

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
  const stream = await readSafeSpfStream(store, domain);
  const { submitted } = stream;
  if (!submitted) return "already_done";
  if (stream.settled && !options.force) return "already_done";

  const outcome = await flattenAndCheck(domain, submitted.original, options.resolver, options.publishZone);
  const event =
    "result" in outcome
      ? recordComputed({ ...stream, submitted }, outcome.result, options.metadata).event
      : computationFailed({ ...stream, submitted }, outcome, transient.has(outcome.code), options.metadata);
  if (!(await appendOutcome(store, stream, event))) return "superseded";
  if ("result" in outcome) return "computed";
  return transient.has(outcome.code) ? "retrying" : "failed";
}
