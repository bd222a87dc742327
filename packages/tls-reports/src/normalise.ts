import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/** IPv6 in RFC 5952 form, IPv4-mapped IPv6 as IPv4; text that is no address is kept as sent. */
export function normaliseAddress(raw: string): string {
  const text = raw.trim();
  const family = isIP(text);
  if (family !== 6) return text;
  const address = ipaddr.IPv6.parse(text);
  return address.isIPv4MappedAddress() ? address.toIPv4Address().toString() : address.toRFC5952String();
}

/** Lower-case without the final dot, as the API names hosts and domains. */
export function normaliseHostName(raw: string): string {
  return raw.trim().toLowerCase().replace(/\.$/, "");
}

/** RFC 3339 date-time (RFC 8460 §4.4), with or without fractions of a second, to Unix seconds. */
const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export function unixSecondsOf(raw: string): number | null {
  const text = raw.trim();
  if (!rfc3339.test(text)) return null;
  const milliseconds = Date.parse(text.replace(" ", "T"));
  return Number.isFinite(milliseconds) ? Math.floor(milliseconds / 1000) : null;
}
