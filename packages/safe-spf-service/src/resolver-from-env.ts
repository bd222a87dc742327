import { getServers } from "node:dns";
import { parseSettings } from "@dmarc-ledger/config";
import { createResolver, type SpfResolver } from "@dmarc-ledger/safe-spf";
import { type SafeSpfSettings, safeSpfSettings } from "./settings.js";

/**
 * The resolver the Safe SPF process asks: DNS_NAMESERVERS ("host:port,…") when set, otherwise
 * the system's IPv4 nameservers on port 53.
 */
export function resolverFrom(settings: SafeSpfSettings): SpfResolver {
  const system = getServers()
    .filter((server) => /^\d+\.\d+\.\d+\.\d+$/.test(server))
    .map((server) => `${server}:53`);
  return createResolver({
    nameservers: settings.DNS_NAMESERVERS ?? (system.length ? system : ["127.0.0.1:53"]),
    timeoutMs: settings.DNS_TIMEOUT_MS,
  });
}

/** resolverFrom on the environment; throws ConfigError when a DNS_* variable is wrong. */
export function resolverFromEnv(env: NodeJS.ProcessEnv): SpfResolver {
  return resolverFrom(parseSettings(safeSpfSettings, env));
}
