import type { EventStore } from "@dmarc-ledger/event-store";
import {
  type ApprovalMembers,
  decodeEvent,
  type EventMetadata,
  newEvent,
  type SenderApprovalSet,
  streams,
} from "@dmarc-ledger/events";
import ipaddr from "ipaddr.js";
import { ownedDomain } from "./domain-ownership.js";

export class InvalidSenderApprovalError extends Error {
  override readonly name = "InvalidSenderApprovalError";
}

const maxServiceLength = 200;

/**
 * The widest ranges a sender may be approved by: an IPv4 /8 and an IPv6 /16 are larger than any
 * sending network; `0.0.0.0/0` or `::/0` would approve the whole Internet.
 */
const widestPrefix = { ipv4: 8, ipv6: 16 };

/** A CIDR in one spelling: the network address and the prefix (`10.1.2.3/8` is `10.0.0.0/8`). */
export function normaliseRange(input: string): string {
  const text = input.trim();
  // A zone (fe80::1%eth0) names a link of the machine, not a sender's address.
  if (text.includes("%"))
    throw new InvalidSenderApprovalError(
      `"${input}" names a network interface (%): give an IP range without it.`,
    );
  let parsed: [ipaddr.IPv4 | ipaddr.IPv6, number];
  try {
    parsed = ipaddr.isValid(text)
      ? [ipaddr.parse(text), ipaddr.parse(text).kind() === "ipv4" ? 32 : 128]
      : ipaddr.parseCIDR(text);
  } catch {
    throw new InvalidSenderApprovalError(`"${input}" is not an IP range (CIDR, e.g. 192.0.2.0/24).`);
  }
  const [address, prefix] = parsed;
  if (prefix < widestPrefix[address.kind()])
    throw new InvalidSenderApprovalError(
      `"${input}" is wider than a /${widestPrefix[address.kind()]}: approve a sender's own range.`,
    );
  const network =
    address.kind() === "ipv4"
      ? ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${prefix}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${prefix}`);
  return `${network.toString()}/${prefix}`;
}

/**
 * Reads the addresses a service groups for a domain now, as aggregate_by_sender names them (the
 * read models' reader, packages/queries' serviceMembers: this package cannot read them).
 */
export type ServiceMembersReader = (domain: string, service: string) => Promise<ApprovalMembers>;

/** Whether two recorded memberships list the same addresses (both sorted) and count. */
const sameMembers = (a: ApprovalMembers | null, b: ApprovalMembers): boolean =>
  a !== null &&
  a.count === b.count &&
  a.addresses.length === b.addresses.length &&
  a.addresses.every((address, at) => address === b.addresses[at]);

/**
 * Approves a sender for a domain (`approved` true), marks it not approved (false), or clears the
 * decision (null). The sender is a service, as GET aggregate_by_sender names it, or an IP range.
 * A service's decision records the addresses `readMembers` says it groups now, so that the ones
 * it gains later are told apart; deciding it again as it stands records them anew when they
 * changed. Otherwise setting what is already in force appends nothing. Returns the position to
 * wait for, or null.
 */
export async function setSenderApproval(
  store: EventStore,
  input: {
    tenantId: string;
    domain: string;
    service?: string | null;
    range?: string | null;
    approved: boolean | null;
  },
  metadata: EventMetadata,
  readMembers?: ServiceMembersReader,
): Promise<bigint | null> {
  const service = input.service?.trim() || null;
  const rangeText = input.range?.trim() || null;
  if ((service === null) === (rangeText === null)) {
    throw new InvalidSenderApprovalError("Name either a service or an IP range, not both.");
  }
  if (service !== null && (service.length > maxServiceLength || /[\u0000-\u001f]/.test(service))) {
    throw new InvalidSenderApprovalError(`A service is 1 to ${maxServiceLength} printable characters.`);
  }
  // "unknown" is every address nothing names, whatever they are: approving it approved spam, and
  // silently other addresses as naming moved them in and out. A decision on it can only be cleared.
  if (service !== null && service.toLowerCase() === "unknown" && input.approved !== null) {
    throw new InvalidSenderApprovalError(
      '"unknown" names no sender: approve a service, a base domain, an AS organisation or an IP range.',
    );
  }
  const range = rangeText === null ? null : normaliseRange(rangeText);
  const { domain, history, revision } = await ownedDomain(store, input.tenantId, input.domain);
  // The decision in force since the domain was last added (a removal clears its approvals).
  let current: boolean | null = null;
  let recorded: ApprovalMembers | null = null;
  for (const event of history) {
    if (event.type === "DomainAdded") [current, recorded] = [null, null];
    if (event.type !== "SenderApprovalSet") continue;
    // Decoded: a v1 decision is lifted to one that recorded no addresses.
    const data = decodeEvent(event)!.data as SenderApprovalSet;
    if (data.service === service && data.range === range) [current, recorded] = [data.approved, data.members];
  }
  const members =
    service !== null && input.approved !== null && readMembers ? await readMembers(domain, service) : null;
  if (current === input.approved && (members === null || sameMembers(recorded, members))) return null;
  const result = await store.append(
    streams.domain(domain),
    [
      newEvent(
        "SenderApprovalSet",
        { domain, tenantId: input.tenantId, service, range, approved: input.approved, members },
        metadata,
      ),
    ],
    revision,
  );
  return result.position;
}
