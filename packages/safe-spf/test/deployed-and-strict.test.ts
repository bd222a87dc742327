/**
 * Defects an outside SPF implementation found in published sets: a term with %{p} that means
 * something else under our root, the lookup the customer's pointer costs, and receivers that
 * count more strictly than RFC 7208 asks. Each scenario is served by a real DNS server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkEquivalence,
  checkHost,
  createResolver,
  type FlattenResult,
  flattenSpf,
  SpfFlattenError,
  toTxtStrings,
} from "../src/index.js";
import { type FixtureDnsServer, type FixtureZones, startFixtureDnsServer } from "../src/testing/index.js";

const tenLookups = Array.from({ length: 10 }, (_, n) => `a:%{l}.h${n + 1}.test`).join(" ");
const nineLookups = Array.from({ length: 9 }, (_, n) => `a:%{l}.h${n + 1}.test`).join(" ");
const eightLookups = Array.from({ length: 8 }, (_, n) => `a:%{l}.h${n + 1}.test`).join(" ");
/** postmaster.hN.test: the names the a:%{l}.hN.test terms query for postmaster@…, none void. */
const hostsOfPostmaster: FixtureZones = Object.fromEntries(
  Array.from({ length: 10 }, (_, n) => [
    `postmaster.h${n + 1}.test`,
    [{ A: `10.9.0.${n + 1}` }, { AAAA: `2001:db8:9::${n + 1}` }],
  ]),
);

const custRecord = "v=spf1 exists:%{p}._p.test -all";

const zones: FixtureZones = {
  ...hostsOfPostmaster,
  // %{p} at the customer's own level: 192.0.2.10's first validated name is elsewhere, its second
  // is under the customer's domain, which %{p} prefers while the record is evaluated there.
  "cust.test": [{ TXT: custRecord }, { MX: [10, "mx.cust.test"] }],
  "mx.cust.test": [{ A: "192.0.2.10" }],
  "srv.other.test": [{ A: "192.0.2.10" }],
  "10.2.0.192.in-addr.arpa": [{ PTR: "srv.other.test" }, { PTR: "mx.cust.test" }],
  "mx.cust.test._p.test": [{ A: "127.0.0.2" }],
  // The same term one include down: kept as include:prov-p.test, it is still evaluated there.
  "cust2.test": [{ TXT: "v=spf1 include:prov-p.test -all" }],
  "prov-p.test": [{ TXT: "v=spf1 exists:%{p}._p.test -all" }],
  // Ten sender-dependent lookups: ten at the root, eleven through the customer's pointer.
  "ten.test": [{ TXT: `v=spf1 ${tenLookups} -all` }],
  "nine.test": [{ TXT: `v=spf1 ${nineLookups} -all` }],
  // A redirect= beside all: the RFC ignores it, strict receivers count it.
  "strict-redirect.test": [{ TXT: "v=spf1 include:prov-r.test -all" }],
  "prov-r.test": [{ TXT: `v=spf1 ${eightLookups} -all redirect=elsewhere.test` }],
  "elsewhere.test": [{ TXT: "v=spf1 ip4:198.51.100.0/24 -all" }],
  // MX exchanges without IPv4 addresses, inside a tree kept verbatim: three void lookups for
  // every IPv4 client under strict counting, none under the RFC's.
  "strict-mx.test": [{ TXT: "v=spf1 include:prov-mx.test -all" }],
  "prov-mx.test": [{ TXT: "v=spf1 exists:%{i}._mx.test mx:v6only.test -all" }],
  "v6only.test": [
    { MX: [10, "x1.v6only.test"] },
    { MX: [20, "x2.v6only.test"] },
    { MX: [30, "x3.v6only.test"] },
  ],
  "x1.v6only.test": [{ AAAA: "2001:db8:61::1" }],
  "x2.v6only.test": [{ AAAA: "2001:db8:61::2" }],
  "x3.v6only.test": [{ AAAA: "2001:db8:61::3" }],
  // Three ptr terms: a client without reverse DNS costs three void lookups to strict receivers.
  "ptrs.test": [{ TXT: "v=spf1 ptr:a.test ptr:b.test ptr:c.test -all" }],
};

let server: FixtureDnsServer;
const resolver = () => createResolver({ nameservers: [server.address], timeoutMs: 1000, retries: 1 });
const zone = "spf.ledger.test";

beforeAll(async () => {
  server = await startFixtureDnsServer(zones);
});
afterAll(() => server.close());

async function flattenError(domain: string, publishZone?: string): Promise<SpfFlattenError> {
  const error = await flattenSpf({
    domain,
    resolver: resolver(),
    ...(publishZone ? { publishZone } : {}),
  }).then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SpfFlattenError);
  return error as SpfFlattenError;
}

/** A published set as the flattener wrote it before these fixes: the record moved as it is. */
function movedAsIs(domain: string, record: string): FlattenResult {
  const name = `${domain}.${zone}`;
  return {
    domain,
    original: record,
    records: [{ name, value: record, strings: toTxtStrings(record), bytes: record.length + 1 }],
    lookupsBefore: 1,
    lookupsAfter: 1,
    sizes: [],
    networks: [],
    keptVerbatim: [],
    warnings: [],
    minTtl: null,
  };
}

describe("%{p} changes meaning when moved", () => {
  it("the original passes 192.0.2.10, the same term under our root fails it", async () => {
    const dns = resolver();
    const sender = "postmaster@cust.test";
    expect((await checkHost("192.0.2.10", "cust.test", sender, { resolver: dns })).result).toBe("pass");
    const report = await checkEquivalence({
      domain: "cust.test",
      result: movedAsIs("cust.test", custRecord),
      resolver: dns,
      randomSamples: 4,
    });
    // The customer's MX host is probed, and its address is where the verdicts part.
    expect(report.differences).toContainEqual(
      expect.objectContaining({ ip: "192.0.2.10", original: "pass", published: "fail" }),
    );
  });

  it("a %{p} term of the customer's own record is refused as unflattenable", async () => {
    const error = await flattenError("cust.test", zone);
    expect(error.code).toBe("unflattenable");
    expect(error.message).toContain("%{p}");
  });

  it("a %{p} term inside an include stays there, kept with its include, and means the same", async () => {
    const dns = resolver();
    const result = await flattenSpf({ domain: "cust2.test", resolver: dns, publishZone: zone });
    expect(result.keptVerbatim).toEqual(["include:prov-p.test"]);
    const report = await checkEquivalence({ domain: "cust2.test", result, resolver: dns, randomSamples: 4 });
    expect(report.differences).toEqual([]);
  });
});

describe("the customer's pointer is the eleventh lookup", () => {
  it("ten lookups fit a set rooted at the domain itself", async () => {
    const result = await flattenSpf({ domain: "ten.test", resolver: resolver() });
    expect(result.lookupsAfter).toBe(10);
  });

  it("under our zone the pointer costs one more: ten are refused, naming the pointer", async () => {
    const error = await flattenError("ten.test", zone);
    expect(error.code).toBe("lookup_limit");
    expect(error.message).toContain("pointing at it");
  });

  it("nine fit, and the set as deployed gives the original's verdicts", async () => {
    const dns = resolver();
    const result = await flattenSpf({ domain: "nine.test", resolver: dns, publishZone: zone });
    expect(result.lookupsAfter).toBe(9);
    const report = await checkEquivalence({ domain: "nine.test", result, resolver: dns, randomSamples: 8 });
    expect(report.differences).toEqual([]);
  });

  it("the equivalence check evaluates the deployed pointer, so a ten-lookup set shows permerror", async () => {
    const dns = resolver();
    const atRoot = await flattenSpf({ domain: "ten.test", resolver: dns });
    const underZone: FlattenResult = {
      ...atRoot,
      records: atRoot.records.map((record) => ({ ...record, name: `ten.test.${zone}` })),
    };
    const report = await checkEquivalence({
      domain: "ten.test",
      result: underZone,
      resolver: dns,
      randomSamples: 4,
    });
    expect(report.differences.length).toBeGreaterThan(0);
    expect(report.differences.every((difference) => difference.published === "permerror")).toBe(true);
  });
});

describe("receivers that count more strictly", () => {
  const sender = "postmaster@example.test";

  it("check_host counts a redirect= beside all when asked to count strictly", async () => {
    const dns = resolver();
    const rfc = await checkHost("203.0.113.1", "prov-r.test", sender, { resolver: dns });
    const strict = await checkHost("203.0.113.1", "prov-r.test", sender, {
      resolver: dns,
      strictCounting: true,
    });
    expect(rfc.lookups).toBe(8);
    expect(strict.lookups).toBe(9);
  });

  it("check_host counts MX exchanges' empty address answers and an empty PTR answer as void", async () => {
    const dns = resolver();
    const mx = (strictCounting: boolean) =>
      checkHost("203.0.113.1", "prov-mx.test", sender, { resolver: dns, strictCounting });
    expect((await mx(false)).result).toBe("fail");
    expect((await mx(true)).result).toBe("permerror");
    const ptr = (strictCounting: boolean) =>
      checkHost("203.0.113.1", "ptrs.test", sender, { resolver: dns, strictCounting });
    expect((await ptr(false)).result).toBe("fail");
    expect((await ptr(true)).result).toBe("permerror");
  });

  it("a verbatim include whose redirect= beside all makes eleven lookups under the strict count is refused", async () => {
    // RFC count: pointer 1 + include 1 + 8 a: terms = 10. Strict: 11.
    const error = await flattenError("strict-redirect.test", zone);
    expect(error.code).toBe("lookup_limit");
  });

  it("a verbatim include costing three void lookups for every IPv4 client is refused", async () => {
    const error = await flattenError("strict-mx.test", zone);
    expect(error.code).toBe("lookup_limit");
    expect(error.message).toContain("void lookups");
  });
});
