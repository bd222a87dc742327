import { getServers } from "node:dns";
import { hostPorts, integer, oneOf, parseSettings } from "@dmarc-ledger/config";
import { z } from "zod";
import { readServiceMapFile, type ServiceMapFile, ServiceMapFileError } from "./service-map-file.js";

/** A service map file, read and checked where the settings are: its problems are the setting's. */
const serviceMapFile = () =>
  z
    .string()
    .optional()
    .transform((path, ctx): ServiceMapFile | null => {
      if (path === undefined) return null;
      try {
        return readServiceMapFile(path);
      } catch (error) {
        if (!(error instanceof ServiceMapFileError)) throw error;
        ctx.addIssue({ code: "custom", message: error.message });
        return z.NEVER;
      }
    });

/** The environment variables of the source-IP resolver, for a process to compose with its own. */
export const sourceIpResolverSettingsShape = {
  /**
   * Reverse DNS of report sources: on (the default: the system's resolvers, or DNS_NAMESERVERS),
   * off, or auto (on only when DNS_NAMESERVERS names the resolvers). Sources are named from the
   * shipped databases and the reports whatever it says.
   */
  SOURCE_IP_RESOLVER: oneOf(["auto", "on", "off"], "on"),
  /** Source IPs resolved per second at most (each is a PTR query and one forward query per name). */
  SOURCE_IP_RESOLVE_RATE: integer({ min: 1, max: 10_000, default: 20 }),
  /** Source IPs resolved at once at most. */
  SOURCE_IP_RESOLVE_CONCURRENCY: integer({ min: 1, max: 1_000, default: 8 }),
  /** Seconds after which an answer is asked for again (default 7 days). */
  SOURCE_IP_REFRESH_AGE: integer({ min: 60, max: 10 * 365 * 86_400, default: 7 * 86_400 }),
  /** Seconds after which an IP whose lookup timed out or failed is tried again (default 1 hour). */
  SOURCE_IP_RETRY_AGE: integer({ min: 1, max: 10 * 365 * 86_400, default: 3_600 }),
  DNS_NAMESERVERS: hostPorts(53),
  DNS_TIMEOUT_MS: integer({ min: 50, max: 60_000, default: 2_000 }),
  /**
   * A CSV file (`base_reverse_dns,name,type`) of services to add to the shipped map, or to
   * name differently: read and checked at start.
   */
  SENDER_SERVICE_MAP_FILE: serviceMapFile(),
};

export interface SourceIpResolverSettings {
  /** Whether reverse DNS is asked (the resolver names sources without it too). */
  enabled: boolean;
  ratePerSecond: number;
  concurrency: number;
  refreshAgeSeconds: number;
  retryAgeSeconds: number;
  /** The resolvers to ask: DNS_NAMESERVERS, else the system's IPv4 ones on port 53. */
  nameservers: string[];
  timeoutMs: number;
  /** The deployment's services (SENDER_SERVICE_MAP_FILE), read; null when unset. */
  serviceMapFile: ServiceMapFile | null;
}

/** Throws ConfigError naming every wrong variable. `defaultMode` is what an unset SOURCE_IP_RESOLVER means (`on`). */
export function sourceIpResolverSettingsFromEnv(
  env: NodeJS.ProcessEnv,
  options: { defaultMode?: "auto" | "on" | "off" } = {},
): SourceIpResolverSettings {
  const parsed = parseSettings(sourceIpResolverSettingsShape, {
    ...env,
    SOURCE_IP_RESOLVER: env.SOURCE_IP_RESOLVER || options.defaultMode,
  });
  const system = getServers()
    .filter((server) => /^\d+\.\d+\.\d+\.\d+$/.test(server))
    .map((server) => `${server}:53`);
  return {
    enabled:
      parsed.SOURCE_IP_RESOLVER === "on" ||
      (parsed.SOURCE_IP_RESOLVER === "auto" && parsed.DNS_NAMESERVERS !== null),
    ratePerSecond: parsed.SOURCE_IP_RESOLVE_RATE,
    concurrency: parsed.SOURCE_IP_RESOLVE_CONCURRENCY,
    refreshAgeSeconds: parsed.SOURCE_IP_REFRESH_AGE,
    retryAgeSeconds: parsed.SOURCE_IP_RETRY_AGE,
    nameservers: parsed.DNS_NAMESERVERS ?? (system.length ? system : ["127.0.0.1:53"]),
    timeoutMs: parsed.DNS_TIMEOUT_MS,
    serviceMapFile: parsed.SENDER_SERVICE_MAP_FILE,
  };
}
