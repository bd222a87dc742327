import { getServers } from "node:dns";
import { createResolver, type SpfResolver } from "@dmarc-ledger/safe-spf";

/**
 * The resolver the Safe SPF process asks: DNS_NAMESERVERS ("host:port,…") when set, otherwise
 * the system's IPv4 nameservers on port 53.
 */
export function resolverFromEnv(env: NodeJS.ProcessEnv): SpfResolver {
  const configured = env.DNS_NAMESERVERS?.split(",")
    .map((server) => server.trim())
    .filter(Boolean);
  const system = getServers()
    .filter((server) => /^\d+\.\d+\.\d+\.\d+$/.test(server))
    .map((server) => `${server}:53`);
  return createResolver({
    nameservers: configured?.length ? configured : system.length ? system : ["127.0.0.1:53"],
    timeoutMs: Number(env.DNS_TIMEOUT_MS ?? 2000),
  });
}
