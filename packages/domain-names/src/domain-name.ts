import { getDomain, parse } from "tldts";
import { hostNameOf } from "./host-name.js";

export class InvalidDomainError extends Error {
  override readonly name = "InvalidDomainError";
}

/**
 * Trims, lower-cases, drops a trailing dot, turns an IDN into punycode, and checks that the result
 * is a host name under a public suffix but not a bare suffix (`co.uk` is refused).
 */
export function normaliseDomain(input: string): string {
  const trimmed = input.trim().toLowerCase();
  if (trimmed === "" || trimmed === ".") throw new InvalidDomainError("The domain is empty.");
  // hostNameOf drops the one trailing dot itself: dropped here too, `example.com..` passed.
  const ascii = hostNameOf(trimmed);
  // A domain a tenant owns has no underscore labels: those name records, not domains.
  if (ascii === null || ascii.includes("_"))
    throw new InvalidDomainError(`"${input}" is not a valid domain name.`);
  const parsed = parse(ascii, { allowPrivateDomains: false });
  if (!parsed.isIcann || !parsed.publicSuffix) {
    throw new InvalidDomainError(`"${input}" is not under a known public suffix.`);
  }
  if (!parsed.domain) throw new InvalidDomainError(`"${input}" is a public suffix, not a domain of its own.`);
  return ascii;
}

/**
 * The registrable domain (public suffix plus one label, ICANN section only, as normaliseDomain
 * judges) of a normalised domain. A domain and every parent or subdomain of it that can be added
 * share it, so it names the tree a domain belongs to.
 */
export function registrableDomain(domain: string): string {
  const registrable = getDomain(domain, { allowPrivateDomains: false });
  if (!registrable) throw new InvalidDomainError(`"${domain}" has no registrable domain.`);
  return registrable;
}

/** True when one of the two is the other or a parent of it. */
export function sameBranch(a: string, b: string): boolean {
  return a === b || a.endsWith(`.${b}`) || b.endsWith(`.${a}`);
}
