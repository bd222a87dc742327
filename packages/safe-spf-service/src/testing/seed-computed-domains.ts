import type { EventStore } from "@dmarc-ledger/event-store";
import { newEvent, streams } from "@dmarc-ledger/events";
import { flattenSpf, type SpfResolver } from "@dmarc-ledger/safe-spf";

/**
 * Puts domains in the store as if they had been added, given an original and computed by the
 * worker: the events the commands append, three to a stream in one append, for tests and
 * benchmarks that need thousands of domains with a record. The flattening is real (through the
 * resolver); the equivalence check, which only decides whether to publish, is left out.
 */
export async function seedComputedDomains(
  store: EventStore,
  input: {
    tenantId: string;
    resolver: SpfResolver;
    domains: { domain: string; original: string }[];
    publishZone?: string;
    parallel?: number;
  },
): Promise<void> {
  const metadata = { causedBy: "seed" };
  let next = 0;
  const worker = async () => {
    while (next < input.domains.length) {
      const { domain, original } = input.domains[next++]!;
      const result = await flattenSpf({
        domain,
        record: original,
        resolver: input.resolver,
        ...(input.publishZone ? { publishZone: input.publishZone } : {}),
      });
      const { tenantId } = input;
      await store.append(
        streams.domain(domain),
        [
          newEvent("DomainAdded", { domain, tenantId }, metadata),
          newEvent("SpfOriginalUpdated", { domain, tenantId, original }, metadata),
          newEvent(
            "SafeSpfRecordComputed",
            {
              domain,
              tenantId,
              original,
              records: result.records.map(({ name, value }) => ({ name, value })),
              lookupsBefore: result.lookupsBefore,
              lookupsAfter: result.lookupsAfter,
              networks: result.networks,
              added: result.networks,
              removed: [],
              warnings: result.warnings,
              minTtl: result.minTtl,
            },
            metadata,
          ),
        ],
        "no_stream",
      );
    }
  };
  await Promise.all(Array.from({ length: input.parallel ?? 20 }, worker));
}
