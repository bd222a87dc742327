import type { EventStore } from "@dmarc-ledger/event-store";
import { type EventMetadata, newEvent, streams } from "@dmarc-ledger/events";
import { ownedDomain } from "./domain-ownership.js";

export class InvalidGroupError extends Error {
  override readonly name = "InvalidGroupError";
}

const maxGroupLength = 100;

/**
 * Puts a domain in a group; an empty group takes it out of its group. Setting the group it is
 * already in appends nothing. Returns the position to wait for, or null when nothing changed.
 */
export async function setDomainGroup(
  store: EventStore,
  input: { tenantId: string; domain: string; group: string },
  metadata: EventMetadata,
): Promise<bigint | null> {
  const group = input.group.trim() === "" ? null : input.group.trim();
  if (group !== null && (group.length > maxGroupLength || /[\u0000-\u001f]/.test(group))) {
    throw new InvalidGroupError(`A group name is 1 to ${maxGroupLength} printable characters.`);
  }
  const { domain, history, revision } = await ownedDomain(store, input.tenantId, input.domain);
  const current = history.reduce<string | null>(
    (found, event) =>
      event.type === "DomainGroupSet" ? (event.data as { group: string | null }).group : found,
    null,
  );
  if (current === group) return null;
  const result = await store.append(
    streams.domain(domain),
    [newEvent("DomainGroupSet", { domain, tenantId: input.tenantId, group }, metadata)],
    revision,
  );
  return result.position;
}
