import type { SourceIpNaming, SourceIpResolved } from "@dmarc-ledger/events";
import { getDomain } from "tldts";
import { specialRangeOf } from "./address-range.js";
import { asnServiceDomains, asnServicesVersion, sendingRangeServiceDomain } from "./asn-services.js";
import type { AuthEvidence } from "./auth-evidence.js";
import { type NetworkDatabases, networkDatabaseVersions, openNetworkDatabases } from "./network-databases.js";
import { type ServiceMap, serviceMap } from "./service-map.js";
import type { ServiceMapFile } from "./service-map-file.js";

/** Names a report source from its reverse-DNS answer, the reports' evidence and the offline maps and databases. */
export interface SourceNamer {
  /** Says which maps and databases name: a naming made with other ones is made again. */
  readonly sources: SourceIpNaming["sources"];
  /** Resolves once name() can answer: the databases are open. */
  ready(): Promise<void>;
  /** Throws before ready() has resolved. */
  name(
    ip: string,
    answer: Pick<SourceIpResolved, "name" | "confirmed">,
    evidence?: AuthEvidence,
  ): SourceIpNaming;
}

/** The domain of `evidence` the map knows with the most messages (ties: the bytewise first), or null. */
function leadingAuthDomain(services: ServiceMap, evidence: AuthEvidence | undefined): string | null {
  let best: { domain: string; messages: number } | null = null;
  for (const [domain, messages] of evidence ?? []) {
    if (!services.serviceOf(domain)) continue;
    if (!best || messages > best.messages || (messages === best.messages && domain < best.domain))
      best = { domain, messages };
  }
  return best?.domain ?? null;
}

/**
 * A service from the evidence at hand, strongest first: the base domain of the forward-confirmed
 * reverse name (anyone can point the PTR of their own address at mail.google.com, only
 * google.com's owner can make that name resolve back to it); else the passing authentication
 * domain in the map that most messages carried; else the network: by its service when the address
 * is in a mail service's published sending range or its AS carries one mail service's mail, else
 * by the AS's organisation. An address of a special-purpose range (private,
 * shared, loopback, link-local, documentation…) has no AS or country and is named by its
 * forward-confirmed name only (a deployment's own relays, through its map file).
 */
export function sourceNamer(services: ServiceMap, networks: NetworkDatabases): SourceNamer {
  const sources = namingSources(services, networks);
  return {
    sources,
    ready: async () => {},
    name(ip, answer, evidence) {
      const addressRange = specialRangeOf(ip);
      const baseDomain = answer.confirmed && answer.name ? getDomain(answer.name) : null;
      const asn = addressRange ? null : networks.asnOf(ip);
      const country = addressRange ? null : networks.countryOf(ip);
      const named = { baseDomain, asn, country, sources, addressRange };
      const byName = baseDomain ? services.serviceOf(baseDomain) : null;
      if (byName) return { ...named, service: byName, namedBy: "rdns", authDomain: null };
      const authDomain = addressRange ? null : leadingAuthDomain(services, evidence);
      if (authDomain)
        return { ...named, service: services.serviceOf(authDomain), namedBy: "auth_domain", authDomain };
      if (asn) {
        const domain = sendingRangeServiceDomain(ip) ?? asnServiceDomains.get(asn.number);
        const service = domain ? services.serviceOf(domain) : null;
        return { ...named, service, namedBy: "asn", authDomain: null };
      }
      return { ...named, service: null, namedBy: null, authDomain: null };
    },
  };
}

function namingSources(
  services: ServiceMap,
  networks: Pick<NetworkDatabases, "asnVersion" | "countryVersion">,
): SourceIpNaming["sources"] {
  return {
    serviceMap: `${services.version}+${asnServicesVersion}`,
    asnDatabase: networks.asnVersion,
    countryDatabase: networks.countryVersion,
  };
}

/**
 * The namer of a process: the shipped service map with the deployment's file, and the databases,
 * opened when the first source is to be named. A process that never sees a source (the embedded
 * service with no report yet) keeps neither the time nor the memory they take; which versions
 * name (`sources`) is known without opening them, so checking for outdated namings costs nothing.
 */
export function lazySourceNamer(file: ServiceMapFile | null): SourceNamer {
  const services = serviceMap(file);
  const sources = namingSources(services, networkDatabaseVersions());
  let namer: SourceNamer | undefined;
  let opening: Promise<void> | undefined;
  return {
    sources,
    ready() {
      opening ??= openNetworkDatabases().then((networks) => {
        namer = sourceNamer(services, networks);
      });
      return opening;
    },
    name(ip, answer, evidence) {
      if (!namer) throw new Error("the source namer is not ready: await ready() first");
      return namer.name(ip, answer, evidence);
    },
  };
}
