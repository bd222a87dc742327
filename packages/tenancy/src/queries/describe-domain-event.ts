/** A tenant as its events' descriptions name it: its id (the CLI's, for operators) or its name. */
export type TenantName = (tenantId: string) => string;

/** The facts of a SafeSpfRecordComputed a change is described against. */
interface ComputedFacts {
  records: { name: string; value: string }[];
  lookupsBefore: number;
  lookupsAfter: number;
  added: string[];
  removed: string[];
}

const listed = (networks: string[], shown = 5) =>
  networks.length <= shown
    ? networks.join(", ")
    : `${networks.slice(0, shown).join(", ")} and ${networks.length - shown} more`;

/** Lookups as "12" when unchanged, "12 -> 13" when they moved. */
const moved = (before: number, after: number) => (before === after ? `${after}` : `${before} -> ${after}`);

/**
 * A domain event in words, for `GET history` and `dmarc-ledger history`. A Safe SPF record that
 * replaces an earlier one is told as its diff: networks added and removed, and the lookups of the
 * original and of the published set before and after.
 */
export function describeDomainEvent(
  type: string,
  data: Record<string, unknown>,
  previousComputed: Record<string, unknown> | null,
  tenantName: TenantName = String,
): string {
  switch (type) {
    case "DomainAdded":
      return `added to tenant ${tenantName(String(data.tenantId))}`;
    case "DomainRemoved":
      return `removed from tenant ${tenantName(String(data.tenantId))}`;
    case "DomainGroupSet":
      return data.group === null ? "removed from its group" : `group set to "${data.group}"`;
    case "SenderApprovalSet": {
      const sender = data.service !== null ? `service "${data.service}"` : `range ${data.range}`;
      // v2 records the service's addresses at the decision; a v1 decision (audited as written) did not.
      const members = data.members as { count: number } | null | undefined;
      const grouping = members
        ? ` (it grouped ${members.count} ${members.count === 1 ? "address" : "addresses"})`
        : "";
      return data.approved === null
        ? `${sender}: approval cleared`
        : `${sender} ${data.approved ? "approved" : "marked not approved"}${grouping}`;
    }
    case "SpfOriginalUpdated":
      return `original SPF record: ${data.original}`;
    case "SafeSpfRecordComputed": {
      const now = data as unknown as ComputedFacts;
      const computed = `Safe SPF computed: ${now.records.length} records, lookups ${now.lookupsBefore} -> ${now.lookupsAfter}`;
      if (!previousComputed) return `${computed}, networks +${now.added.length} -${now.removed.length}`;
      const before = previousComputed as unknown as ComputedFacts;
      const changes = [
        now.added.length > 0 ? `added ${listed(now.added)}` : "nothing added",
        now.removed.length > 0 ? `removed ${listed(now.removed)}` : "nothing removed",
        `lookups of the original ${moved(before.lookupsBefore, now.lookupsBefore)}`,
        `of the published set ${moved(before.lookupsAfter, now.lookupsAfter)}`,
      ];
      return `${computed}; changed: ${changes.join("; ")}`;
    }
    case "SafeSpfComputationFailed":
      return `Safe SPF failed (${data.code}${data.retrying ? ", will retry" : ""}): ${data.message}${
        previousComputed ? "; the last good record is still served" : ""
      }`;
    default:
      return JSON.stringify(data);
  }
}

/** Describes a domain's events in order, each against the Safe SPF record computed before it. */
export function describeDomainEvents(
  events: { type: string; data: Record<string, unknown> }[],
  tenantName: TenantName = String,
): string[] {
  let previousComputed: Record<string, unknown> | null = null;
  return events.map((event) => {
    const text = describeDomainEvent(event.type, event.data, previousComputed, tenantName);
    if (event.type === "SafeSpfRecordComputed") previousComputed = event.data;
    return text;
  });
}
