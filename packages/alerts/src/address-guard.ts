import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { lookup as lookupAll } from "node:dns/promises";
import type { LookupFunction } from "node:net";
import { hostname as machineHostname } from "node:os";
import ipaddr from "ipaddr.js";

export class RefusedAddressError extends Error {
  override readonly name = "RefusedAddressError";
}

/**
 * IPv6 prefixes whose addresses carry an IPv4 address (IPv4-compatible ::/96, IPv4-mapped and
 * -translated, NAT64 64:ff9b::/96 and /48, 6to4, Teredo): refused whatever the IPv4 inside, since
 * each is a way to name a private one that a check of the IPv6 range alone would pass.
 */
const ipv4Embedding: [ipaddr.IPv6, number][] = (
  [
    ["::", 96],
    ["::ffff:0:0", 96],
    ["::ffff:0:0:0", 96],
    ["64:ff9b::", 96],
    ["64:ff9b:1::", 48],
    ["2002::", 16],
    ["2001::", 32],
  ] as const
).map(([prefix, bits]) => [ipaddr.IPv6.parse(prefix), bits]);

/** An ISATAP interface id (…:0:5efe:a.b.c.d, …:200:5efe:a.b.c.d) carries an IPv4 address too. */
const isIsatap = (address: ipaddr.IPv6) =>
  (address.parts[4] === 0 || address.parts[4] === 0x200) && address.parts[5] === 0x5efe;

/** Whether an address is on the public internet: not private, loopback, link-local, multicast, reserved… */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6") {
    const v6 = parsed as ipaddr.IPv6;
    if (ipv4Embedding.some(([prefix, bits]) => v6.match(prefix, bits)) || isIsatap(v6)) return false;
  }
  return parsed.range() === "unicast";
}

/**
 * A lookup for http.request that resolves the name and refuses the connection when any address it
 * resolves to is not public. The connection goes to the address checked here, so a name that
 * answers differently a moment later (DNS rebinding) cannot slip a private address past the check.
 */
export function publicOnlyLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, "", 0);
      const refused = allowPrivate ? [] : addresses.filter((entry) => !isPublicAddress(entry.address));
      if (refused.length > 0 || addresses.length === 0) {
        const refusal = new RefusedAddressError("the host name resolves to an address that is not public");
        return callback(refusal as NodeJS.ErrnoException, "", 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/**
 * An endpoint's URL must be http(s) without credentials; an IP literal must be public (or allowed).
 * The messages name no address: they go back to whoever typed the URL.
 */
export function checkEndpointUrl(value: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new RefusedAddressError("not a URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new RefusedAddressError("a webhook URL starts with https:// or http://");
  }
  if (url.username || url.password)
    throw new RefusedAddressError("a webhook URL carries no user name or password");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (ipaddr.isValid(host) && !allowPrivate && !isPublicAddress(host)) {
    throw new RefusedAddressError("the host is not a public address");
  }
  return url;
}

/** Names that mean this machine or its own network, whatever a resolver says of them. */
function isLocalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.+$/, "");
  const machine = machineHostname().toLowerCase().replace(/\.+$/, "");
  return (
    name === "localhost" ||
    name.endsWith(".localhost") ||
    name === "local" ||
    name.endsWith(".local") ||
    name === machine ||
    name === machine.split(".")[0]
  );
}

/** How long the check when an endpoint is added waits for its name to resolve. */
const addLookupTimeoutMs = 5000;

/**
 * The check when an endpoint is added or changed: checkEndpointUrl, then (unless private addresses
 * are allowed) a host name that means this machine (localhost in any case or with a trailing dot,
 * *.localhost, *.local, the machine's own name) is refused, and the name is resolved: one that
 * does not resolve, or resolves to any address that is not public, is refused. Delivery checks
 * the addresses again as it connects (publicOnlyLookup): a name may change after this.
 */
export async function checkEndpointToAdd(value: string, allowPrivate: boolean): Promise<URL> {
  const url = checkEndpointUrl(value, allowPrivate);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (allowPrivate || ipaddr.isValid(host)) return url;
  if (isLocalName(host)) throw new RefusedAddressError("the host is this machine or a local name");
  let timer: NodeJS.Timeout | undefined;
  const addresses = await Promise.race([
    lookupAll(host, { all: true, verbatim: true }).catch(() => [] as LookupAddress[]),
    new Promise<LookupAddress[]>((resolve) => {
      timer = setTimeout(() => resolve([]), addLookupTimeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
  if (addresses.length === 0) throw new RefusedAddressError("the host name does not resolve");
  if (addresses.some((entry) => !isPublicAddress(entry.address)))
    throw new RefusedAddressError("the host name resolves to an address that is not public");
  return url;
}
