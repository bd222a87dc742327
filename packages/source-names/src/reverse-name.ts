import ipaddr from "ipaddr.js";

/** The name a PTR query asks for: `4.3.2.1.in-addr.arpa`, or 32 nibbles under `ip6.arpa`. */
export function reverseName(ip: string): string {
  const address = ipaddr.parse(ip);
  if (address.kind() === "ipv4") return `${address.toByteArray().reverse().join(".")}.in-addr.arpa`;
  const nibbles = address
    .toByteArray()
    .flatMap((byte) => [byte >> 4, byte & 0x0f])
    .map((nibble) => nibble.toString(16));
  return `${nibbles.reverse().join(".")}.ip6.arpa`;
}

/** Whether two textual addresses are the same address (IPv6 has many spellings). */
export function sameAddress(a: string, b: string): boolean {
  if (!ipaddr.isValid(a) || !ipaddr.isValid(b)) return false;
  const left = ipaddr.process(a);
  const right = ipaddr.process(b);
  return left.kind() === right.kind() && left.toNormalizedString() === right.toNormalizedString();
}
