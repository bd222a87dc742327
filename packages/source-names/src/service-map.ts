import { knownSendersTable, knownSendersVersion } from "./known-senders.generated.js";
import type { SenderService, ServiceMapFile } from "./service-map-file.js";

/** Base domains to services: the map shipped with the project, and a deployment's additions. */
export interface ServiceMap {
  /** Says which maps gave the names: recorded in SourceIpResolved, so a replay repeats them. */
  version: string;
  serviceOf(baseDomain: string): SenderService | null;
}

/**
 * Authentication domains the shipped map lacks, each to the base domain in the map of the
 * service that holds them. onmicrosoft.com: every Microsoft 365 tenant's own domain
 * (<tenant>.onmicrosoft.com) is signed by Microsoft 365 (DKIM d=) and sends from its SPF
 * include spf.protection.outlook.com, as Microsoft documents for its tenants' default domain.
 * (protection.outlook.com and outlook.com are outlook.com in the map already.)
 */
const serviceAliases: ReadonlyMap<string, string> = new Map([["onmicrosoft.com", "outlook.com"]]);

/** Says which aliases named a service: recorded with the map's version in every naming. */
const serviceAliasesVersion = "aliases-1";

let shipped: Map<string, SenderService> | undefined;

/** The shipped map, parsed once per process (about 38,000 services). */
function shippedServices(): Map<string, SenderService> {
  if (shipped) return shipped;
  shipped = new Map();
  // Names and types repeat: one string per distinct value keeps the map small.
  const types = new Map<string, string>();
  for (const line of knownSendersTable.split("\n")) {
    const [domain, name, type] = line.split("\t") as [string, string, string];
    const sharedType = types.get(type) ?? type;
    types.set(type, sharedType);
    shipped.set(domain, { name, type: sharedType });
  }
  return shipped;
}

/**
 * The shipped map and its aliases, with the deployment's file (SENDER_SERVICE_MAP_FILE) over them
 * when given.
 */
export function serviceMap(file: ServiceMapFile | null = null): ServiceMap {
  const services = shippedServices();
  return {
    version: `${knownSendersVersion}+${serviceAliasesVersion}${file ? `+local-sha256:${file.sha256}` : ""}`,
    serviceOf(baseDomain) {
      const key = baseDomain.toLowerCase();
      const known = file?.services.get(key) ?? services.get(key);
      if (known) return known;
      // An alias is the service its domain names: the deployment's file renames it too.
      const alias = serviceAliases.get(key);
      return alias ? (file?.services.get(alias) ?? services.get(alias) ?? null) : null;
    },
  };
}
