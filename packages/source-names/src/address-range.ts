import ipaddr from "ipaddr.js";

/**
 * The special-purpose range holding `ip`, by ipaddr.js's name for it (`private`,
 * `carrierGradeNat` (100.64.0.0/10), `loopback`, `linkLocal`, `uniqueLocal`, `reserved`: the
 * documentation ranges 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24 and 2001:db8::/32 among
 * others, …); null for a public unicast address, or text that is no address. An IPv4-mapped IPv6
 * address is judged as its IPv4 one. Such an address is not on the Internet: no database can say
 * where it is, so it is given no AS, country or service.
 */
export function specialRangeOf(ip: string): string | null {
  if (!ipaddr.isValid(ip)) return null;
  const range = ipaddr.process(ip).range();
  return range === "unicast" ? null : range;
}
