import { type EventMetadata, newEvent, type SourceIpNaming } from "@dmarc-ledger/events";

/**
 * The resolver's answer for `ip` with its naming (service, base domain, AS, country) and no
 * reverse name: what the tests and benches that name sources append to the address's stream.
 */
export function namedSourceIp(
  ip: string,
  naming: SourceIpNaming | null,
  options: { resolvedAt?: Date; metadata?: EventMetadata } = {},
): ReturnType<typeof newEvent> {
  return newEvent(
    "SourceIpResolved",
    {
      ip,
      outcome: "found",
      ptrNames: [],
      name: null,
      confirmed: false,
      resolvedAt: (options.resolvedAt ?? new Date()).toISOString(),
      naming,
    },
    options.metadata ?? { causedBy: "test" },
  );
}
