import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkEquivalence,
  checkHost,
  createResolver,
  diffFlattenResults,
  type FlattenResult,
  flattenSpf,
  maxRecordBytes,
  SpfFlattenError,
} from "../src/index.js";
import {
  type FixtureDnsServer,
  type FixtureZones,
  providerZones,
  startFixtureDnsServer,
} from "../src/testing/index.js";

const customerZones: FixtureZones = {
  "google.customer.test": [{ TXT: "v=spf1 include:_spf.gmail.test ~all" }],
  "outlook.customer.test": [{ TXT: "v=spf1 include:spf.outlook.test -all" }],
  "mailchimp.customer.test": [{ TXT: "v=spf1 include:servers.mcsv.test ?all" }],
  // 4 + 4 + 2 + 1 + 3 + 1 + 1 = 16 lookups: receivers give permerror to whoever is not matched early.
  "many.customer.test": [
    {
      TXT: "v=spf1 include:_spf.gmail.test include:spf.outlook.test include:servers.mcsv.test include:spf.sendgrid.test include:spf.zendesk.test a mx -all",
    },
    { A: "203.0.113.5" },
    { MX: [10, "mail.many.customer.test"] },
  ],
  "mail.many.customer.test": [{ A: "203.0.113.25" }, { AAAA: "2001:db8:25::25" }],
  // Nested four deep, a different qualifier at each level.
  "deep.customer.test": [{ TXT: "v=spf1 ip4:192.0.2.1 include:l1.deep.test -all" }],
  "l1.deep.test": [{ TXT: "v=spf1 -ip4:10.1.0.0/16 include:l2.deep.test ~all" }],
  "l2.deep.test": [{ TXT: "v=spf1 ip4:10.0.0.0/8 ~include:l3.deep.test ?all" }],
  "l3.deep.test": [{ TXT: "v=spf1 ip6:2001:db8:3::/48 include:l4.deep.test -all" }],
  "l4.deep.test": [{ TXT: "v=spf1 ip4:10.2.0.0/16 ip6:2001:db8:4::/48 +all" }],
  // Qualifiers on includes that must never become pass, overlapping networks, shadowing.
  "qualifiers.customer.test": [
    {
      TXT: "v=spf1 -ip4:198.51.100.128/25 ?include:neutral.q.test ~include:soft.q.test -include:hard.q.test -mx include:_spf.gmail.test ~all",
    },
    { MX: [10, "mx.qualifiers.customer.test"] },
  ],
  "mx.qualifiers.customer.test": [{ A: "203.0.113.77" }],
  "neutral.q.test": [{ TXT: "v=spf1 ip4:198.51.100.0/24 -all" }],
  "soft.q.test": [{ TXT: "v=spf1 ip4:203.0.113.0/24 ip6:2001:db8:50f7::/48 -all" }],
  "hard.q.test": [{ TXT: "v=spf1 ip4:192.0.2.0/24 ~ip4:172.16.0.0/12 -all" }],
  // IPv6 and dual CIDR lengths on a and mx.
  "ipv6.customer.test": [
    { TXT: "v=spf1 a:hosts.ipv6.test/24//64 mx/28//56 ip6:2001:db8:aaaa::/48 -all" },
    { MX: [5, "mx.ipv6.test"] },
  ],
  "hosts.ipv6.test": [{ A: "198.51.100.33" }, { A: "198.51.100.34" }, { AAAA: "2001:db8:1:2::3" }],
  "mx.ipv6.test": [{ A: "203.0.113.200" }, { AAAA: "2001:db8:77:1::1" }],
  // A void include stays as it is: receivers give permerror past it, and so must the published set.
  "void.customer.test": [{ TXT: "v=spf1 ip4:192.0.2.10 include:nothing.void.test ip4:192.0.2.20 -all" }],
  // Sender-dependent terms are kept, with %{d} made explicit.
  "macros.customer.test": [
    {
      TXT: "v=spf1 include:servers.mcsv.test exists:%{i}._ip.%{d} include:%{l}._users.%{d2} ptr -all",
    },
  ],
  "192.0.2.99._ip.macros.customer.test": [{ A: "127.0.0.2" }],
  "alice._users.customer.test": [{ TXT: "v=spf1 ip4:203.0.113.64/26 -all" }],
  "99.2.0.192.in-addr.arpa": [{ PTR: "host.macros.customer.test" }],
  // Redirect to a provider, with records before it.
  "redirect.customer.test": [{ TXT: "v=spf1 ip4:192.0.2.77 redirect=spf.outlook.test" }],
  // Loops.
  "loop.customer.test": [{ TXT: "v=spf1 include:loop-a.test -all" }],
  "loop-a.test": [{ TXT: "v=spf1 include:loop-b.test ~all" }],
  "loop-b.test": [{ TXT: "v=spf1 ip4:192.0.2.1 include:loop-a.test" }],
  // Too many terms that cost lookups even after flattening.
  "unpublishable.customer.test": [
    {
      TXT: "v=spf1 exists:%{i}.a.test exists:%{i}.b.test exists:%{i}.c.test exists:%{i}.d.test exists:%{i}.e.test exists:%{i}.f.test exists:%{i}.g.test exists:%{i}.h.test exists:%{i}.i.test exists:%{i}.j.test exists:%{i}.k.test -all",
    },
  ],
};

let server: FixtureDnsServer;
const resolver = () => createResolver({ nameservers: [server.address], timeoutMs: 1000, retries: 1 });

beforeAll(async () => {
  server = await startFixtureDnsServer({ ...providerZones, ...customerZones });
});
afterAll(() => server.close());

function expectWithinLimits(result: FlattenResult) {
  expect(result.lookupsAfter).toBeLessThanOrEqual(10);
  for (const record of result.records) {
    expect(record.strings.join("")).toBe(record.value);
    for (const text of record.strings) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(255);
    expect(record.bytes).toBeLessThanOrEqual(maxRecordBytes(record.name));
  }
}

async function flattenAndCheck(domain: string, sender = `postmaster@${domain}`) {
  const dns = resolver();
  const result = await flattenSpf({ domain, resolver: dns, publishZone: "spf.ledger.test" });
  expectWithinLimits(result);
  const report = await checkEquivalence({ domain, result, resolver: dns, sender });
  expect(report.differences).toEqual([]);
  expect(report.checked).toBeGreaterThan(100);
  return result;
}

describe("flattening provider-like trees", () => {
  it("Google-like include tree", async () => {
    const result = await flattenAndCheck("google.customer.test");
    expect(result.lookupsBefore).toBe(4);
    expect(result.records[0]!.name).toBe("google.customer.test.spf.ledger.test");
    expect(result.networks).toContain("2001:4860:4000::/36");
    expect(result.records.at(-1)!.value.endsWith("~all")).toBe(true);
  });

  it("Microsoft-like tree: adjacent and contained networks merge", async () => {
    const result = await flattenAndCheck("outlook.customer.test");
    // 52.100/15 + 52.102/16 + 52.103/17 + 52.103.128/17 = 52.100.0.0/14; 40.92/17 is inside 40.92/16.
    expect(result.networks).toContain("52.100.0.0/14");
    expect(result.networks).not.toContain("40.92.0.0/17");
  });

  it("Mailchimp-like record with mx, under ?all", async () => {
    const result = await flattenAndCheck("mailchimp.customer.test");
    expect(result.networks).toEqual(expect.arrayContaining(["198.51.100.10/31", "2001:db8:10::1/128"]));
  });

  it("more than 10 lookups become a chained set within every limit", async () => {
    const result = await flattenAndCheck("many.customer.test");
    expect(result.lookupsBefore).toBe(16);
    expect(result.records.length).toBeGreaterThan(1);
    expect(result.records[1]!.name).toMatch(/^_spf1-[0-9a-f]{8}\.many\.customer\.test\.spf\.ledger\.test$/);
  });

  it("the published set served by a real DNS server gives the verdicts of the original", async () => {
    const dns = resolver();
    const result = await flattenSpf({
      domain: "many.customer.test",
      resolver: dns,
      publishZone: "spf.ledger.test",
    });
    const published = await startFixtureDnsServer({
      ...Object.fromEntries(result.records.map((record) => [record.name, [{ TXT: record.strings }]])),
    });
    try {
      const served = createResolver({ nameservers: [published.address] });
      for (const ip of ["74.125.1.1", "2a01:111:f400::1", "203.0.113.25", "8.8.8.8", "188.172.130.1"]) {
        const expected = await checkHost(ip, "many.customer.test", "a@many.customer.test", {
          resolver: dns,
          enforceLimits: false,
        });
        const actual = await checkHost(ip, result.records[0]!.name, "a@many.customer.test", {
          resolver: served,
        });
        expect(actual.result).toBe(expected.result);
      }
    } finally {
      await published.close();
    }
  });

  it("includes nested four deep with mixed qualifiers", async () => {
    const result = await flattenAndCheck("deep.customer.test");
    expect(result.lookupsBefore).toBe(4);
    expect(result.lookupsAfter).toBe(0);
  });

  it("?, ~ and - on includes and mx never turn into pass", async () => {
    const result = await flattenAndCheck("qualifiers.customer.test");
    const dns = resolver();
    const published = (await import("../src/resolver.js")).createOverlayResolver(dns, result.records);
    const verdict = (ip: string) =>
      checkHost(ip, result.records[0]!.name, "x@qualifiers.customer.test", { resolver: published });
    expect((await verdict("203.0.113.9")).result).toBe("softfail");
    expect((await verdict("198.51.100.9")).result).toBe("neutral");
    expect((await verdict("198.51.100.200")).result).toBe("fail");
    expect((await verdict("192.0.2.9")).result).toBe("fail");
    expect((await verdict("203.0.113.77")).result).toBe("softfail");
  });

  it("IPv6 and dual CIDR lengths on a and mx", async () => {
    const result = await flattenAndCheck("ipv6.customer.test");
    expect(result.networks).toEqual(
      expect.arrayContaining([
        "198.51.100.0/24",
        "2001:db8:1:2::/64",
        "203.0.113.192/28",
        "2001:db8:77::/56",
      ]),
    );
  });

  it("a void include is kept so that the published set fails the same way", async () => {
    const result = await flattenAndCheck("void.customer.test");
    expect(result.keptVerbatim).toEqual(["include:nothing.void.test"]);
  });

  it("macros, exists and ptr are kept verbatim with %{d} made explicit", async () => {
    const result = await flattenAndCheck("macros.customer.test", "alice@customer.test");
    expect(result.keptVerbatim).toEqual([
      "exists:%{i}._ip.macros.customer.test",
      "include:%{l}._users.customer.test",
      "ptr:macros.customer.test",
    ]);
    await flattenAndCheck("macros.customer.test", "bob@customer.test");
  });

  it("redirect is followed", async () => {
    const result = await flattenAndCheck("redirect.customer.test");
    expect(result.records.at(-1)!.value.endsWith("-all")).toBe(true);
  });

  it("a record given on the command line instead of read from DNS", async () => {
    const dns = resolver();
    const result = await flattenSpf({
      domain: "adhoc.customer.test",
      record: "v=spf1 include:servers.mcsv.test include:spf.sendgrid.test -all",
      resolver: dns,
    });
    expect(result.records[0]!.name).toBe("adhoc.customer.test");
    expect(result.lookupsBefore).toBe(3);
    const report = await checkEquivalence({ domain: "adhoc.customer.test", result, resolver: dns });
    expect(report.differences).toEqual([]);
  });
});

describe("flattening errors", () => {
  it("detects loops", async () => {
    await expect(flattenSpf({ domain: "loop.customer.test", resolver: resolver() })).rejects.toMatchObject({
      code: "loop",
    });
  });

  it("refuses a set that would still need more than 10 lookups", async () => {
    const error = await flattenSpf({ domain: "unpublishable.customer.test", resolver: resolver() }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(SpfFlattenError);
    expect(error.code).toBe("lookup_limit");
  });

  it("reports a domain without an SPF record", async () => {
    await expect(flattenSpf({ domain: "nothing.void.test", resolver: resolver() })).rejects.toMatchObject({
      code: "no_spf_record",
    });
  });

  it("reports DNS timeouts", async () => {
    const silent = await startFixtureDnsServer(customerZones, { silentNames: ["servers.mcsv.test"] });
    try {
      const dns = createResolver({ nameservers: [silent.address], timeoutMs: 150, retries: 0 });
      await expect(flattenSpf({ domain: "mailchimp.customer.test", resolver: dns })).rejects.toMatchObject({
        code: "dns_timeout",
      });
    } finally {
      await silent.close();
    }
  });
});

describe("diffFlattenResults", () => {
  it("lists networks added and removed", async () => {
    const dns = resolver();
    const before = await flattenSpf({
      domain: "x.customer.test",
      record: "v=spf1 include:spf.sendgrid.test -all",
      resolver: dns,
    });
    const after = await flattenSpf({
      domain: "x.customer.test",
      record: "v=spf1 ip4:167.89.0.0/16 ip4:50.31.32.0/19 -all",
      resolver: dns,
    });
    expect(diffFlattenResults(before, after)).toEqual({
      added: ["167.89.128.0/17"],
      removed: ["208.117.48.0/20"],
    });
    expect(diffFlattenResults(null, before).added).toEqual(before.networks);
  });
});
