import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";

export class RefusedAddressError extends Error {
  override readonly name = "RefusedAddressError";
}

/** Whether an address is on the public internet: not private, loopback, link-local, multicast, reserved… */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === "unicast";
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
        const refusal = new RefusedAddressError(
          `${hostname} resolves to ${refused.map((entry) => entry.address).join(", ") || "nothing"}: not a public address`,
        );
        return callback(refusal as NodeJS.ErrnoException, "", 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/** An endpoint's URL must be http(s) without credentials; an IP literal must be public (or allowed). */
export function checkEndpointUrl(value: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new RefusedAddressError(`"${value}" is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new RefusedAddressError("a webhook URL starts with https:// or http://");
  }
  if (url.username || url.password)
    throw new RefusedAddressError("a webhook URL carries no user name or password");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (ipaddr.isValid(host) && !allowPrivate && !isPublicAddress(host)) {
    throw new RefusedAddressError(`${host} is not a public address`);
  }
  return url;
}
