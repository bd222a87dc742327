import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResolver, DnsLookupError } from "../src/index.js";
import { type FixtureDnsServer, startFixtureDnsServer } from "../src/testing/index.js";

const longRecord = `v=spf1 ${Array.from({ length: 45 }, (_, i) => `ip4:203.0.${i}.0/24`).join(" ")} -all`;

let server: FixtureDnsServer;
beforeAll(async () => {
  server = await startFixtureDnsServer(
    {
      "split.test": [{ TXT: ["v=spf1 ", "ip4:192.0.2.1 -all"] }],
      "long.test": [{ TXT: longRecord }],
      "only-a.test": [{ A: "192.0.2.1" }, { AAAA: "2001:db8::1" }],
      "mx.test": [{ MX: [10, "mail.mx.test."] }, { MX: [20, "Mail2.mx.test"] }],
      "1.2.0.192.in-addr.arpa": [{ PTR: "host.ptr.test" }],
      "alias.test": [{ CNAME: "only-a.test" }],
      "partial-timeout.test": [{ A: "192.0.2.9" }, "TIMEOUT"],
      "short-ttl.test": [{ TXT: "v=spf1 -all", ttl: 0 }],
      "three-seconds.test": [{ TXT: "v=spf1 -all", ttl: 3 }],
    },
    { silentNames: ["silent.test"] },
  );
});
afterAll(() => server.close());

const resolver = (options = {}) =>
  createResolver({ nameservers: [server.address], timeoutMs: 200, ...options });

describe("resolver over a real DNS server", () => {
  it("joins the strings of one TXT record with no separator", async () => {
    expect((await resolver().lookup("split.test", "TXT")).values).toEqual(["v=spf1 ip4:192.0.2.1 -all"]);
  });

  it("retries over TCP when the UDP answer is truncated", async () => {
    const dns = resolver();
    const before = server.queryLog.length;
    expect((await dns.lookup("long.test", "TXT")).values).toEqual([longRecord]);
    expect(dns.stats.tcpFallbacks).toBe(1);
    expect(server.queryLog.slice(before).map((entry) => entry.transport)).toEqual(["udp", "tcp"]);
  });

  it("tells NXDOMAIN from an empty answer", async () => {
    const dns = resolver();
    expect(await dns.lookup("missing.test", "TXT")).toMatchObject({ rcode: "NXDOMAIN", values: [] });
    expect(await dns.lookup("only-a.test", "TXT")).toMatchObject({ rcode: "NOERROR", values: [] });
  });

  it("reads A, AAAA, MX, PTR and follows CNAMEs", async () => {
    const dns = resolver();
    expect((await dns.lookup("only-a.test", "A")).values).toEqual(["192.0.2.1"]);
    expect((await dns.lookup("only-a.test", "AAAA")).values).toEqual(["2001:db8::1"]);
    expect((await dns.lookup("mx.test", "MX")).values).toEqual(["mail.mx.test", "mail2.mx.test"]);
    expect((await dns.lookup("1.2.0.192.in-addr.arpa", "PTR")).values).toEqual(["host.ptr.test"]);
    expect((await dns.lookup("alias.test", "A")).values).toEqual(["192.0.2.1"]);
  });

  it("times out on silence, retrying as configured", async () => {
    const dns = resolver({ retries: 2 });
    const before = server.queries;
    const error = await dns.lookup("silent.test", "TXT").catch((caught) => caught);
    expect(error).toBeInstanceOf(DnsLookupError);
    expect(error.code).toBe("timeout");
    expect(server.queries - before).toBe(3);
    expect(dns.stats.retries).toBe(2);
  });

  it("TIMEOUT in a zone silences only the types the name has no records of", async () => {
    const dns = resolver({ retries: 0 });
    expect((await dns.lookup("partial-timeout.test", "A")).values).toEqual(["192.0.2.9"]);
    await expect(dns.lookup("partial-timeout.test", "TXT")).rejects.toMatchObject({ code: "timeout" });
  });

  it("falls over to the next nameserver", async () => {
    const silent = await startFixtureDnsServer({}, { silentNames: ["split.test"] });
    try {
      const dns = createResolver({
        nameservers: [silent.address, server.address],
        timeoutMs: 150,
        retries: 0,
      });
      expect((await dns.lookup("split.test", "TXT")).values).toEqual(["v=spf1 ip4:192.0.2.1 -all"]);
      expect(silent.queries).toBe(1);
    } finally {
      await silent.close();
    }
  });

  it("caches answers for their TTL and asks once for concurrent lookups", async () => {
    const dns = resolver();
    const before = server.queries;
    await Promise.all(Array.from({ length: 5 }, () => dns.lookup("split.test", "TXT")));
    await dns.lookup("split.test", "TXT");
    expect(server.queries - before).toBe(1);
    expect(dns.queries).toBe(1);
    expect(dns.stats.cacheHits).toBe(5);
    // TTL 0: the answer may not be reused.
    await dns.lookup("short-ttl.test", "TXT");
    await dns.lookup("short-ttl.test", "TXT");
    expect(server.queries - before).toBe(3);
  });

  it("answers from the cache with what is left of the TTL, and caches NXDOMAIN too", async () => {
    const dns = resolver();
    const before = server.queries;
    expect((await dns.lookup("three-seconds.test", "TXT")).ttl).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    // A flattening that read the cache now depends on an answer that expires in under 2 s.
    expect((await dns.lookup("three-seconds.test", "TXT")).ttl).toBeLessThanOrEqual(1);
    expect((await dns.lookup("missing.test", "TXT")).rcode).toBe("NXDOMAIN");
    expect((await dns.lookup("missing.test", "TXT")).rcode).toBe("NXDOMAIN");
    expect(server.queries - before).toBe(2);
  });

  it("keeps at most maxCacheEntries answers, dropping the oldest", async () => {
    const dns = resolver({ maxCacheEntries: 2 });
    await dns.lookup("split.test", "TXT");
    await dns.lookup("only-a.test", "A");
    await dns.lookup("only-a.test", "AAAA");
    const before = server.queries;
    await dns.lookup("only-a.test", "AAAA");
    await dns.lookup("only-a.test", "A");
    expect(server.queries - before).toBe(0);
    await dns.lookup("split.test", "TXT");
    expect(server.queries - before).toBe(1);
  });
});
