import type { RecordedEvent } from "@dmarc-ledger/event-store";
import type { DomainAdded, DomainReleased, DomainReserved } from "@dmarc-ledger/events";

/** Who has the domain now, from its stream: the last DomainAdded not followed by DomainRemoved. */
export function currentOwner(history: RecordedEvent[]): string | null {
  let owner: string | null = null;
  for (const event of history) {
    if (event.type === "DomainAdded") owner = (event.data as DomainAdded).tenantId;
    else if (event.type === "DomainRemoved") owner = null;
  }
  return owner;
}

/** The claims in force on a registrable domain's stream: domain → tenant. */
export function activeClaims(history: RecordedEvent[]): Map<string, string> {
  const claims = new Map<string, string>();
  for (const event of history) {
    if (event.type === "DomainReserved") {
      const claim = event.data as DomainReserved;
      claims.set(claim.domain, claim.tenantId);
    } else if (event.type === "DomainReleased") {
      claims.delete((event.data as DomainReleased).domain);
    }
  }
  return claims;
}
