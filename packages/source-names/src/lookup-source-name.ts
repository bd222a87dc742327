import type { SourceIpResolved } from "@dmarc-ledger/events";
import { DnsLookupError, type SpfResolver } from "@dmarc-ledger/safe-spf";
import ipaddr from "ipaddr.js";
import { reverseName, sameAddress } from "./reverse-name.js";

export type SourceNameAnswer = Pick<SourceIpResolved, "outcome" | "ptrNames" | "name" | "confirmed">;

/** PTR names checked forward at most: a reverse zone listing hundreds is not worth hundreds of queries. */
const maxNamesChecked = 5;

const isTimeout = (error: unknown) => error instanceof DnsLookupError && error.code === "timeout";

/**
 * Forward-confirmed reverse DNS of one IP: its PTR names, and the first of them whose A (or, for
 * IPv6, AAAA) records hold the IP. A timeout anywhere throws (DnsLookupError "timeout"), so the
 * caller can retry the whole answer; a forward lookup that fails otherwise only leaves that name
 * unconfirmed.
 */
export async function lookupSourceName(resolver: SpfResolver, ip: string): Promise<SourceNameAnswer> {
  const reverse = await resolver.lookup(reverseName(ip), "PTR");
  const ptrNames = [...new Set(reverse.values.filter(Boolean))];
  if (ptrNames.length === 0) {
    return {
      outcome: reverse.rcode === "NXDOMAIN" ? "nxdomain" : "no_name",
      ptrNames,
      name: null,
      confirmed: false,
    };
  }
  const forwardType = ipaddr.parse(ip).kind() === "ipv4" ? "A" : "AAAA";
  for (const name of ptrNames.slice(0, maxNamesChecked)) {
    let addresses: string[];
    try {
      addresses = (await resolver.lookup(name, forwardType)).values;
    } catch (error) {
      if (isTimeout(error)) throw error;
      continue;
    }
    if (addresses.some((address) => sameAddress(address, ip))) {
      return { outcome: "found", ptrNames, name, confirmed: true };
    }
  }
  return { outcome: "found", ptrNames, name: ptrNames[0]!, confirmed: false };
}
