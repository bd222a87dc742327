import { knownSendersTable, knownSendersVersion } from "./known-senders.generated.js";
import type { SenderService, ServiceMapFile } from "./service-map-file.js";

/** Base domains to services: the map shipped with the project, and a deployment's additions. */
export interface ServiceMap {
  /** Says which maps gave the names: recorded in SourceIpResolved, so a replay repeats them. */
  version: string;
  serviceOf(baseDomain: string): SenderService | null;
}

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

/** The shipped map, with the deployment's file (SENDER_SERVICE_MAP_FILE) over it when given. */
export function serviceMap(file: ServiceMapFile | null = null): ServiceMap {
  const services = shippedServices();
  return {
    version: file ? `${knownSendersVersion}+local-sha256:${file.sha256}` : knownSendersVersion,
    serviceOf: (baseDomain) => {
      const key = baseDomain.toLowerCase();
      return file?.services.get(key) ?? services.get(key) ?? null;
    },
  };
}
