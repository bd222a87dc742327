import { open, stat } from "node:fs/promises";
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
 * ranges are held in typed arrays and searched by bisection: 4 or 8 bytes per bound,
 * instead of an object per range.
 */
export class AsnTable {
  private constructor(
    private readonly firsts: Uint32Array | BigUint64Array,
    private readonly lasts: Uint32Array | BigUint64Array,
    private readonly numbers: Uint32Array,
    private readonly organizationIndex: Uint32Array,
    private readonly organizations: string[],
    private readonly wide: boolean,
  ) {}

  /**
   * Reads one file. IPv4 bounds fit 32 bits; IPv6 ones keep their high 64 bits, which is where
   * every route is cut (nothing is announced longer than a /64), and the low half of a last
   * address is all ones. Read 1 MiB at a time rather than 21 MB at once, and each read awaited:
   * the whole takes about half a second of one core (seconds on a busy machine), which a
   * process answering DNS or HTTP must not spend in one turn of its event loop.
   */
  static async read(path: string, family: "ipv4" | "ipv6"): Promise<AsnTable> {
    const wide = family === "ipv6";
    const shift = BigInt(64);
    let capacity = Math.max(1024, Math.ceil((await stat(path)).size / 40));
    let firsts: Uint32Array | BigUint64Array = wide
      ? new BigUint64Array(capacity)
      : new Uint32Array(capacity);
    let lasts: Uint32Array | BigUint64Array = wide ? new BigUint64Array(capacity) : new Uint32Array(capacity);
    let numbers = new Uint32Array(capacity);
    let organizationIndex = new Uint32Array(capacity);
    const organizations: string[] = [];
    const indexOf = new Map<string, number>();
    let row = 0;
    const grow = () => {
      capacity = Math.ceil(capacity * 1.5);
      const wider = <T extends Uint32Array | BigUint64Array>(array: T): T => {
        const next = (
          array instanceof BigUint64Array ? new BigUint64Array(capacity) : new Uint32Array(capacity)
        ) as T;
        next.set(array as never);
        return next;
      };
      firsts = wider(firsts);
      lasts = wider(lasts);
      numbers = wider(numbers);
      organizationIndex = wider(organizationIndex);
    };
    /** Digits of `bytes` from `from` to `to` as a number (bounds and AS numbers: below 2^53). */
    const digits = (bytes: Buffer, from: number, to: number) => {
      let value = 0;
      for (let at = from; at < to; at++) {
        const digit = bytes[at]! - 48;
        if (digit < 0 || digit > 9) throw new Error(`${path}: line ${row + 1} holds a bad number`);
        value = value * 10 + digit;
      }
      return value;
    };
    // Parsed from the bytes, not from a string per line: 400,000 lines of strings left 40 MB
    // more resident than this.
    const addLine = (bytes: Buffer, from: number, to: number) => {
      if (to > from && bytes[to - 1] === 13) to--;
      if (to === from) return;
      const comma1 = bytes.indexOf(44, from);
      const comma2 = comma1 === -1 ? -1 : bytes.indexOf(44, comma1 + 1);
      const comma3 = comma2 === -1 ? -1 : bytes.indexOf(44, comma2 + 1);
      if (comma3 === -1 || comma3 >= to)
        throw new Error(`${path}: line ${row + 1} is not first,last,asn,organization`);
      // The organisation is the rest of the line, quoted (with "" for ") when it holds a comma.
      let organization = bytes.toString("utf8", comma3 + 1, to);
      if (organization.startsWith('"')) organization = organization.slice(1, -1).replaceAll('""', '"');
      if (row === capacity) grow();
      if (wide) {
        (firsts as BigUint64Array)[row] = BigInt(bytes.toString("latin1", from, comma1)) >> shift;
        (lasts as BigUint64Array)[row] = BigInt(bytes.toString("latin1", comma1 + 1, comma2)) >> shift;
      } else {
        (firsts as Uint32Array)[row] = digits(bytes, from, comma1);
        (lasts as Uint32Array)[row] = digits(bytes, comma1 + 1, comma2);
      }
      numbers[row] = digits(bytes, comma2 + 1, comma3);
      let index = indexOf.get(organization);
      if (index === undefined) {
        index = organizations.push(organization) - 1;
        indexOf.set(organization, index);
      }
      organizationIndex[row] = index;
      if (row > 0 && firsts[row]! < firsts[row - 1]!)
        throw new Error(`${path}: line ${row + 1} is out of order`);
      row++;
    };
    const file = await open(path, "r");
    try {
      const chunk = Buffer.alloc(1 << 20);
      let filled = 0;
      for (;;) {
        const { bytesRead: read } = await file.read(chunk, filled, chunk.length - filled, null);
        const end = filled + read;
        let start = 0;
        for (
          let newline = chunk.indexOf(10, start);
          newline !== -1 && newline < end;
          newline = chunk.indexOf(10, start)
        ) {
          addLine(chunk, start, newline);
          start = newline + 1;
        }
        if (read === 0) {
          addLine(chunk, start, end);
          break;
        }
        if (start === 0 && end === chunk.length) throw new Error(`${path}: a line longer than 1 MiB`);
        chunk.copy(chunk, 0, start, end);
        filled = end - start;
      }
    } finally {
      await file.close();
    }
    // Copied to their length: the spare capacity goes.
    return new AsnTable(
      firsts.slice(0, row),
      lasts.slice(0, row),
      numbers.slice(0, row),
      organizationIndex.slice(0, row),
      organizations,
      wide,
    );
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
