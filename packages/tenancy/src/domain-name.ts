import { domainToASCII } from "node:url";
import { parse } from "tldts";

export class InvalidDomainError extends Error {
  override readonly name = "InvalidDomainError";
}

const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Trims, lower-cases, drops a trailing dot, turns an IDN into punycode, and checks that the result
 * is a host name under a public suffix but not a bare suffix (`co.uk` is refused).
 */
export function normaliseDomain(input: string): string {
  const trimmed = input.trim().toLowerCase().replace(/\.$/, "");
  if (trimmed === "") throw new InvalidDomainError("The domain is empty.");
  const ascii = domainToASCII(trimmed);
  if (ascii === "" || ascii.length > 253)
    throw new InvalidDomainError(`"${input}" is not a valid domain name.`);
  const labels = ascii.split(".");
  if (labels.length < 2 || !labels.every((part) => label.test(part))) {
    throw new InvalidDomainError(`"${input}" is not a valid domain name.`);
  }
  const parsed = parse(ascii, { allowPrivateDomains: false });
  if (!parsed.isIcann || !parsed.publicSuffix) {
    throw new InvalidDomainError(`"${input}" is not under a known public suffix.`);
  }
  if (!parsed.domain) throw new InvalidDomainError(`"${input}" is a public suffix, not a domain of its own.`);
  return ascii;
}
