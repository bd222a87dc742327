import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IpSet, parseCidr, rangeToCidrs } from "../src/ip-networks.js";

const smallRange = fc
  .tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 40 }))
  .map(([start, length]) => ({
    family: 4 as const,
    start: BigInt(start),
    end: BigInt(Math.min(255, start + length)),
  }));

const members = (set: IpSet) => {
  const found: number[] = [];
  for (let value = 0; value < 300; value++)
    if (set.contains({ family: 4, value: BigInt(value) })) found.push(value);
  return found;
};

describe("IpSet", () => {
  it("union, difference and CIDR output agree with address-by-address sets", () => {
    fc.assert(
      fc.property(fc.array(smallRange, { maxLength: 8 }), fc.array(smallRange, { maxLength: 8 }), (a, b) => {
        const left = IpSet.of(a);
        const right = IpSet.of(b);
        const inA = new Set(
          a.flatMap((r) =>
            Array.from({ length: Number(r.end - r.start) + 1 }, (_, i) => Number(r.start) + i),
          ),
        );
        const inB = new Set(
          b.flatMap((r) =>
            Array.from({ length: Number(r.end - r.start) + 1 }, (_, i) => Number(r.start) + i),
          ),
        );
        expect(members(left)).toEqual([...inA].sort((x, y) => x - y));
        expect(members(left.minus(right))).toEqual([...inA].filter((v) => !inB.has(v)).sort((x, y) => x - y));
        const rebuilt = IpSet.of(left.toCidrs().map(parseCidr));
        expect(members(rebuilt)).toEqual(members(left));
      }),
    );
  });

  it("merges adjacent and contained networks into the fewest CIDRs", () => {
    const set = IpSet.of(
      ["192.0.2.0/25", "192.0.2.128/25", "192.0.2.64/26", "2001:db8::/33", "2001:db8:8000::/33"].map(
        parseCidr,
      ),
    );
    expect(set.toCidrs()).toEqual(["192.0.2.0/24", "2001:db8::/32"]);
    expect(rangeToCidrs({ family: 4, start: 1n, end: 6n }).length).toBe(4);
  });
});
