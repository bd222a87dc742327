import type { SourceIpNaming, SourceIpResolved } from "@dmarc-ledger/events";
import { getDomain } from "tldts";
import { type NetworkDatabases, openNetworkDatabases } from "./network-databases.js";
import { type ServiceMap, serviceMap } from "./service-map.js";
import type { ServiceMapFile } from "./service-map-file.js";

/** Names a report source from its reverse-DNS answer and the offline maps and databases. */
export interface SourceNamer {
  name(ip: string, answer: Pick<SourceIpResolved, "name" | "confirmed">): SourceIpNaming;
}

/**
 * The base domain is the registrable domain (public suffix list, tldts) of the PTR name only
 * when that name is forward-confirmed: anyone can point the PTR of their own address at
 * mail.google.com, only google.com's owner can make that name resolve back to it. So a spoofed
 * name names no service, and the source is known by its AS alone.
 */
export function sourceNamer(services: ServiceMap, networks: NetworkDatabases): SourceNamer {
  const sources = {
    serviceMap: services.version,
    asnDatabase: networks.asnVersion,
    countryDatabase: networks.countryVersion,
  };
  return {
    name(ip, answer) {
      const baseDomain = answer.confirmed && answer.name ? getDomain(answer.name) : null;
      return {
        baseDomain,
        service: baseDomain ? services.serviceOf(baseDomain) : null,
        asn: networks.asnOf(ip),
        country: networks.countryOf(ip),
        sources,
      };
    },
  };
}

/**
 * The namer of a process: the shipped service map with the deployment's file, and the databases,
 * opened at the first answer to name. A process that never resolves a source (the embedded
 * service with no report yet) keeps neither the time nor the memory they take.
 */
export function lazySourceNamer(file: ServiceMapFile | null): SourceNamer {
  let namer: SourceNamer | undefined;
  return {
    name(ip, answer) {
      namer ??= sourceNamer(serviceMap(file), openNetworkDatabases());
      return namer.name(ip, answer);
    },
  };
}
