import { readFileSync } from "node:fs";
import type ipaddr from "ipaddr.js";

/** The autonomous system announcing an address. */
export interface AsnAnswer {
  number: number;
  organization: string;
}

/**
 * Address ranges to AS numbers and organisations, from @ip-location-db/asn's `*-num.csv` files
 * (`first,last,asn,organization`, ranges as integers, sorted by their first address). The npm
 * registry has no MMDB of this database (`@ip-location-db/asn-mmdb` is not published), so the
 * ranges are held in typed arrays and searched by bisection: about 4 bytes per range and bound,
 * instead of an object per range.
 */
export class AsnTable {
  private constructor(
    private readonly firsts: Float64Array | BigUint64Array,
    private readonly lasts: Float64Array | BigUint64Array,
    private readonly numbers: Uint32Array,
    private readonly organizationIndex: Uint32Array,
    private readonly organizations: string[],
    private readonly wide: boolean,
  ) {}

  /**
   * Reads one file. IPv4 bounds fit a double exactly; IPv6 ones keep their high 64 bits, which
   * is where every route is cut (nothing is announced longer than a /64), and the low half of a
   * last address is all ones.
   */
  static read(path: string, family: "ipv4" | "ipv6"): AsnTable {
    // Walked as bytes, one line at a time: splitting 21 MB of text into 400,000 strings first
    // took 100 MB of resident memory that the process kept after the strings were gone.
    const bytes = readFileSync(path);
    let count = 0;
    for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) count++;
    if (bytes.length > 0 && bytes[bytes.length - 1] !== 10) count++;
    const wide = family === "ipv6";
    const firsts = wide ? new BigUint64Array(count) : new Float64Array(count);
    const lasts = wide ? new BigUint64Array(count) : new Float64Array(count);
    const numbers = new Uint32Array(count);
    const organizationIndex = new Uint32Array(count);
    const organizations: string[] = [];
    const indexOf = new Map<string, number>();
    const shift = BigInt(64);
    let row = 0;
    for (let start = 0; start < bytes.length && row < count; row++) {
      let end = bytes.indexOf(10, start);
      if (end === -1) end = bytes.length;
      const comma1 = bytes.indexOf(44, start);
      const comma2 = bytes.indexOf(44, comma1 + 1);
      const comma3 = bytes.indexOf(44, comma2 + 1);
      if (comma1 === -1 || comma3 === -1 || comma3 > end)
        throw new Error(`${path}: line ${row + 1} is not first,last,asn,organization`);
      const first = bytes.toString("latin1", start, comma1);
      const last = bytes.toString("latin1", comma1 + 1, comma2);
      // The organisation is the rest of the line, quoted (with "" for ") when it holds a comma.
      let organization = bytes.toString("utf8", comma3 + 1, bytes[end - 1] === 13 ? end - 1 : end);
      if (organization.startsWith('"')) organization = organization.slice(1, -1).replaceAll('""', '"');
      if (wide) {
        (firsts as BigUint64Array)[row] = BigInt(first) >> shift;
        (lasts as BigUint64Array)[row] = BigInt(last) >> shift;
      } else {
        (firsts as Float64Array)[row] = Number(first);
        (lasts as Float64Array)[row] = Number(last);
      }
      numbers[row] = Number(bytes.toString("latin1", comma2 + 1, comma3));
      let index = indexOf.get(organization);
      if (index === undefined) {
        index = organizations.push(organization) - 1;
        indexOf.set(organization, index);
      }
      organizationIndex[row] = index;
      if (row > 0 && firsts[row]! < firsts[row - 1]!)
        throw new Error(`${path}: line ${row + 1} is out of order`);
      start = end + 1;
    }
    return new AsnTable(firsts, lasts, numbers, organizationIndex, organizations, wide);
  }

  get size(): number {
    return this.numbers.length;
  }

  /** The AS of the address, or null when no range holds it. `key` is the address as this table counts. */
  private find(key: number | bigint): AsnAnswer | null {
    let low = 0;
    let high = this.firsts.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (this.firsts[middle]! <= key) {
        found = middle;
        low = middle + 1;
      } else high = middle - 1;
    }
    // A few ranges of the database lie inside an earlier, longer one: look back a little.
    for (let row = found; row >= 0 && row > found - 8; row--) {
      if (this.lasts[row]! >= key) {
        return {
          number: this.numbers[row]!,
          organization: this.organizations[this.organizationIndex[row]!]!,
        };
      }
    }
    return null;
  }

  lookup(address: ipaddr.IPv4 | ipaddr.IPv6): AsnAnswer | null {
    const bytes = address.toByteArray();
    if (!this.wide) return this.find(bytes.reduce((value, byte) => value * 256 + byte, 0));
    return this.find(
      bytes.slice(0, 8).reduce((value, byte) => (value << BigInt(8)) | BigInt(byte), BigInt(0)),
    );
  }
}
