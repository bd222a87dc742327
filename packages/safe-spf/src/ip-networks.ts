import ipaddr from "ipaddr.js";

export type IpFamily = 4 | 6;

export interface IpAddress {
  family: IpFamily;
  value: bigint;
}

/** An inclusive address range of one family. */
export interface IpRange {
  family: IpFamily;
  start: bigint;
  end: bigint;
}

const familyBits = { 4: 32, 6: 128 } as const;

function bytesToBigint(bytes: number[]): bigint {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value;
}

function bigintToBytes(value: bigint, length: number): number[] {
  const bytes = new Array<number>(length);
  for (let i = length - 1; i >= 0; i--) {
    bytes[i] = Number(value & 0xffn);
    value >>= 8n;
  }
  return bytes;
}

const dottedQuad = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** Strict RFC 7208 ip4-network: four decimal parts, no shorthand, no leading zeros. */
export function isIpv4Literal(text: string): boolean {
  return dottedQuad.test(text);
}

export function isIpv6Literal(text: string): boolean {
  return text.includes(":") && !text.includes("%") && ipaddr.IPv6.isValid(text);
}

/**
 * Parses a client address. IPv4-mapped IPv6 addresses are treated as IPv4, as receivers do
 * (the RFC 7208 suite expects `::FFFF:1.2.3.4` to match `ip4:1.2.3.4`, never `ip6:`).
 */
export function parseIpAddress(text: string): IpAddress | null {
  if (isIpv4Literal(text)) {
    return { family: 4, value: bytesToBigint(ipaddr.IPv4.parse(text).toByteArray()) };
  }
  if (!isIpv6Literal(text)) return null;
  const v6 = ipaddr.IPv6.parse(text);
  if (v6.isIPv4MappedAddress()) {
    return { family: 4, value: bytesToBigint(v6.toIPv4Address().toByteArray()) };
  }
  return { family: 6, value: bytesToBigint(v6.toByteArray()) };
}

/** Network literal as written in a record (`ip6:` networks keep their family even when IPv4-mapped). */
export function parseNetworkAddress(text: string, family: IpFamily): bigint | null {
  if (family === 4) return isIpv4Literal(text) ? bytesToBigint(ipaddr.IPv4.parse(text).toByteArray()) : null;
  return isIpv6Literal(text) ? bytesToBigint(ipaddr.IPv6.parse(text).toByteArray()) : null;
}

export function formatAddress(family: IpFamily, value: bigint): string {
  return ipaddr.fromByteArray(bigintToBytes(value, family === 4 ? 4 : 16)).toString();
}

export function prefixRange(family: IpFamily, value: bigint, prefix: number): IpRange {
  const hostBits = BigInt(familyBits[family] - prefix);
  const start = (value >> hostBits) << hostBits;
  return { family, start, end: start + (1n << hostBits) - 1n };
}

export function rangeContains(range: IpRange, address: IpAddress): boolean {
  return range.family === address.family && address.value >= range.start && address.value <= range.end;
}

export function maxAddress(family: IpFamily): bigint {
  return (1n << BigInt(familyBits[family])) - 1n;
}

/** The fewest CIDR blocks that cover exactly the given range. */
export function rangeToCidrs(range: IpRange): string[] {
  const bits = familyBits[range.family];
  const cidrs: string[] = [];
  let start = range.start;
  while (start <= range.end) {
    let size = 0;
    while (size < bits) {
      const next = size + 1;
      const block = 1n << BigInt(next);
      if (start % block !== 0n || start + block - 1n > range.end) break;
      size = next;
    }
    cidrs.push(`${formatAddress(range.family, start)}/${bits - size}`);
    start += 1n << BigInt(size);
  }
  return cidrs;
}

export function parseCidr(cidr: string): IpRange {
  const slash = cidr.lastIndexOf("/");
  const address = cidr.slice(0, slash);
  const family: IpFamily = address.includes(":") ? 6 : 4;
  const value = parseNetworkAddress(address, family);
  if (value === null) throw new Error(`invalid network ${cidr}`);
  return prefixRange(family, value, Number(cidr.slice(slash + 1)));
}

/** Sorts ranges of one family and merges those that overlap or touch. */
function mergeSorted(ranges: IpRange[]): IpRange[] {
  const sorted = [...ranges].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const merged: IpRange[] = [];
  for (const range of sorted) {
    const last = merged.at(-1);
    if (last && range.start <= last.end + 1n) {
      if (range.end > last.end) merged[merged.length - 1] = { ...last, end: range.end };
    } else merged.push(range);
  }
  return merged;
}

/**
 * A set of addresses kept as sorted, disjoint, non-adjacent ranges per family, so that union
 * merges contained and adjacent networks and the CIDR list it yields is minimal.
 */
export class IpSet {
  private readonly ranges: Record<IpFamily, IpRange[]> = { 4: [], 6: [] };

  static of(ranges: Iterable<IpRange>): IpSet {
    const set = new IpSet();
    const byFamily: Record<IpFamily, IpRange[]> = { 4: [], 6: [] };
    for (const range of ranges) byFamily[range.family].push(range);
    for (const family of [4, 6] as const) set.ranges[family] = mergeSorted(byFamily[family]);
    return set;
  }

  add(range: IpRange): void {
    this.ranges[range.family] = mergeSorted([...this.ranges[range.family], range]);
  }

  addSet(other: IpSet): void {
    for (const family of [4, 6] as const) {
      if (other.ranges[family].length === 0) continue;
      this.ranges[family] = mergeSorted([...this.ranges[family], ...other.ranges[family]]);
    }
  }

  /** One sweep over both sorted lists per family. */
  minus(other: IpSet): IpSet {
    const result = new IpSet();
    for (const family of [4, 6] as const) {
      const cuts = other.ranges[family];
      const kept: IpRange[] = [];
      let c = 0;
      for (const range of this.ranges[family]) {
        let start = range.start;
        while (c < cuts.length && cuts[c]!.end < start) c++;
        for (let k = c; k < cuts.length && cuts[k]!.start <= range.end; k++) {
          if (cuts[k]!.start > start) kept.push({ family, start, end: cuts[k]!.start - 1n });
          start = cuts[k]!.end + 1n;
        }
        if (start <= range.end) kept.push({ family, start, end: range.end });
      }
      result.ranges[family] = kept;
    }
    return result;
  }

  clone(): IpSet {
    return IpSet.of(this.all());
  }

  overlaps(range: IpRange): boolean {
    return this.ranges[range.family].some((own) => own.start <= range.end && own.end >= range.start);
  }

  contains(address: IpAddress): boolean {
    return this.ranges[address.family].some((range) => rangeContains(range, address));
  }

  isEmpty(): boolean {
    return this.ranges[4].length === 0 && this.ranges[6].length === 0;
  }

  all(): IpRange[] {
    return [...this.ranges[4], ...this.ranges[6]];
  }

  toCidrs(): string[] {
    return this.all().flatMap(rangeToCidrs);
  }
}
