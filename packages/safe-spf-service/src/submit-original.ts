import type { EventStore } from "@dmarc-ledger/event-store";
import { type EventMetadata, newEvent, streams } from "@dmarc-ledger/events";
import { parseSpfRecord } from "@dmarc-ledger/safe-spf";
import { ownedDomain } from "@dmarc-ledger/tenancy";

/**
 * PUT update_safe_spf: checks that the domain is the tenant's (DomainNotFoundError) and that the
 * record parses (SpfSyntaxError, naming the term and its position), then stores the original.
 * The Safe SPF process reacts to the event; the answer does not wait for DNS.
 */
export async function submitOriginalSpf(
  store: EventStore,
  input: { tenantId: string; domain: string; original: string },
  metadata: EventMetadata,
): Promise<bigint> {
  const { domain, revision } = await ownedDomain(store, input.tenantId, input.domain);
  const original = input.original.trim().replace(/\s+/g, " ");
  parseSpfRecord(original);
  const result = await store.append(
    streams.domain(domain),
    [newEvent("SpfOriginalUpdated", { domain, tenantId: input.tenantId, original }, metadata)],
    revision,
  );
  return result.position;
}
