import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { checkEquivalence, createResolver, flattenSpf, SpfFlattenError } from "../src/index.js";
import { type FixtureDnsServer, type FixtureRecord, startFixtureDnsServer } from "../src/testing/index.js";

const qualifier = fc.constantFrom("", "+", "-", "~", "?");
const network4 = fc
  .tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 14, max: 32 }))
  .map(([b, c, prefix]) => `ip4:10.${b}.${c}.0/${Math.max(prefix, 14)}`.replace(/\/32$/, ""));
const network6 = fc
  .tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 40, max: 128 }))
  .map(([b, prefix]) => `ip6:2001:db8:${b}::/${prefix}`);
const hostName = fc.integer({ min: 0, max: 2 }).map((n) => `host${n}.prop.test`);
const cidrSuffix = fc.constantFrom("", "/24", "//64", "/28//56", "/32//128");

/** A term of record `index` of `count`: includes and redirects only point forward, so trees are acyclic. */
function term(index: number, count: number) {
  const later = fc
    .integer({ min: index + 1, max: Math.max(index + 1, count - 1) })
    .map((j) => `d${j}.prop.test`);
  const options = [
    fc.tuple(qualifier, network4).map(([q, n]) => q + n),
    fc.tuple(qualifier, network6).map(([q, n]) => q + n),
    fc.tuple(qualifier, hostName, cidrSuffix).map(([q, h, c]) => `${q}a:${h}${c}`),
    fc.tuple(qualifier, cidrSuffix).map(([q, c]) => `${q}mx:mx.prop.test${c}`),
    // Exchanges without IPv4 addresses: void lookups to strict receivers.
    qualifier.map((q) => `${q}mx:mx2.prop.test`),
  ];
  if (index + 1 < count) options.push(fc.tuple(qualifier, later).map(([q, d]) => `${q}include:${d}`));
  return { term: fc.oneof(...options), later };
}

const tree = fc.integer({ min: 1, max: 5 }).chain((count) =>
  fc.tuple(
    ...Array.from({ length: count }, (_, index) => {
      const { term: t, later } = term(index, count);
      const ending =
        index + 1 < count
          ? fc.oneof(
              qualifier.map((q) => ` ${q}all`),
              later.map((d) => ` redirect=${d}`),
              // all makes the redirect= unreachable; strict receivers count it all the same.
              fc.tuple(qualifier, later).map(([q, d]) => ` ${q}all redirect=${d}`),
              fc.constant(""),
            )
          : fc.oneof(
              qualifier.map((q) => ` ${q}all`),
              fc.constant(""),
            );
      return fc
        .tuple(fc.array(t, { maxLength: 5 }), ending)
        .map(([terms, end]) => `v=spf1 ${terms.join(" ")}${end}`);
    }),
  ),
);

const hosts: Record<string, FixtureRecord[]> = {
  "host0.prop.test": [{ A: "10.1.2.3" }, { AAAA: "2001:db8:1::7" }],
  "host1.prop.test": [{ A: "10.2.200.9" }, { A: "10.2.201.9" }],
  "host2.prop.test": [{ AAAA: "2001:db8:2:ff::1" }],
  "mx.prop.test": [{ MX: [10, "host0.prop.test"] }, { MX: [20, "host2.prop.test"] }],
  "host3.prop.test": [{ AAAA: "2001:db8:3:ff::1" }],
  "mx2.prop.test": [{ MX: [10, "host2.prop.test"] }, { MX: [20, "host3.prop.test"] }],
};

let server: FixtureDnsServer;
beforeAll(async () => {
  server = await startFixtureDnsServer({});
});
afterAll(() => server.close());

/**
 * What is published gives every probed client the original's verdict, as deployed (through the
 * customer's pointer) and under both the RFC's and the strictest receivers' count. A set that
 * cannot be published within the limits is refused, never published: such runs hold vacuously,
 * and most runs must publish.
 */
it("flattening random SPF trees never changes a verdict", async () => {
  let published = 0;
  const runs = 40;
  await fc.assert(
    fc.asyncProperty(tree, async (records) => {
      server.setZones({
        ...hosts,
        ...Object.fromEntries(records.map((text, index) => [`d${index}.prop.test`, [{ TXT: text }]])),
      });
      const resolver = createResolver({ nameservers: [server.address] });
      let result: Awaited<ReturnType<typeof flattenSpf>>;
      try {
        result = await flattenSpf({ domain: "d0.prop.test", resolver, publishZone: "pub.test" });
      } catch (error) {
        if (error instanceof SpfFlattenError && ["lookup_limit", "record_too_large"].includes(error.code))
          return;
        throw error;
      }
      published++;
      const report = await checkEquivalence({ domain: "d0.prop.test", result, resolver, randomSamples: 8 });
      expect(report.differences).toEqual([]);
    }),
    { numRuns: runs },
  );
  expect(published).toBeGreaterThan(runs / 2);
});
