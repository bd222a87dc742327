import { InvalidDomainError, normaliseDomain } from "@dmarc-ledger/domain-names";
import type { EventStore, RecordedEvent } from "@dmarc-ledger/event-store";
import { streams } from "@dmarc-ledger/events";
import { currentOwner } from "./domain-owner.js";

/** The domain is not one of the caller's: unknown, or another tenant's (which we do not reveal). */
export class DomainNotFoundError extends Error {
  override readonly name = "DomainNotFoundError";
}

/**
 * Checks on the domain's own stream (not a read model, which may lag) that the tenant owns the
 * domain, and returns the normalised name, the stream's events, and its revision for an
 * optimistic append.
 */
export async function ownedDomain(
  store: EventStore,
  tenantId: string,
  input: string,
): Promise<{ domain: string; history: RecordedEvent[]; revision: bigint }> {
  let domain: string;
  try {
    domain = normaliseDomain(input);
  } catch (error) {
    if (error instanceof InvalidDomainError)
      throw new DomainNotFoundError(`${input} is not one of your domains.`);
    throw error;
  }
  const history = await store.readStream(streams.domain(domain));
  if (currentOwner(history) !== tenantId) {
    throw new DomainNotFoundError(`${domain} is not one of your domains.`);
  }
  return { domain, history, revision: history.at(-1)!.revision };
}
