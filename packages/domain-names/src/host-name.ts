import { domainToASCII } from "node:url";

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const label = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;
/** RFC 1035: 255 octets on the wire, 253 characters written out. */
export const MAX_HOST_NAME_LENGTH = 253;

/**
 * The host name `input` stands for (lower case, ASCII, IDNs in punycode, without a trailing dot),
 * or null when it is none: at least two labels of letters, digits, hyphens (and underscores, which
 * DKIM and SPF names carry), at most 63 characters each and 253 in all. Entities left unexpanded,
 * lone surrogates, spaces and the like therefore never pass.
 */
export function hostNameOf(input: string): string | null {
  const trimmed = input.trim().toLowerCase().replace(/\.$/, "");
  if (trimmed === "" || trimmed.length > MAX_HOST_NAME_LENGTH * 4) return null;
  // Lone surrogates are not text: domainToASCII would turn them into U+FFFD and then into punycode.
  if (loneSurrogate.test(trimmed)) return null;
  const ascii = /^[\x00-\x7F]*$/.test(trimmed) ? trimmed : domainToASCII(trimmed);
  if (ascii === "" || ascii.length > MAX_HOST_NAME_LENGTH) return null;
  const labels = ascii.split(".");
  if (labels.length < 2 || !labels.every((part) => label.test(part))) return null;
  return ascii;
}
