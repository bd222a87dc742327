import type { RecordedEvent } from "@dmarc-ledger/event-store";
import { newEvent } from "@dmarc-ledger/events";
import { describe, expect, it } from "vitest";
import { authorizationName, PublishedRecords } from "../src/published-records.js";
import { TYPE } from "../src/wire.js";
import { Zone } from "../src/zone.js";

const apex = (name: string) => ({
  name,
  soa: { primary: "ns1.test", admin: "hostmaster.test", refresh: 1, retry: 1, expire: 1, minimum: 60 },
  soaTtl: 3600,
  nameServers: ["ns1.test"],
  nsTtl: 3600,
});

let position = 0n;
function recorded(type: string, data: unknown, at: number): RecordedEvent {
  position++;
  return {
    id: `e${position}`,
    stream: "domain-x",
    type,
    revision: 0n,
    position,
    data,
    metadata: {},
    recordedAt: new Date(at),
  };
}

function computed(domain: string, records: { name: string; value: string }[], at: number): RecordedEvent {
  const event = newEvent(
    "SafeSpfRecordComputed",
    {
      domain,
      tenantId: "t",
      original: "",
      records,
      lookupsBefore: 1,
      lookupsAfter: 1,
      networks: [],
      added: [],
      removed: [],
      warnings: [],
      minTtl: null,
    },
    {},
  );
  return recorded(event.type, event.data, at);
}

describe("PublishedRecords: the zone as the events say", () => {
  const setup = () => {
    const zone = new Zone([apex("spf.test"), apex("reports.test")]);
    const skipped: string[] = [];
    const published = new PublishedRecords(zone, {
      safeSpfZone: "spf.test",
      reportsDomain: "reports.test",
      recordTtl: 100,
      onSkipped: (_event, reason) => skipped.push(reason),
    });
    return { zone, published, skipped };
  };
  const set = [
    { name: "a.com.spf.test", value: "v=spf1 ip4:192.0.2.1 redirect=_spf1-00000001.a.com.spf.test" },
    {
      name: "_spf1-00000001.a.com.spf.test",
      value: "v=spf1 ip4:192.0.2.2 redirect=_spf2-00000001.a.com.spf.test",
    },
    { name: "_spf2-00000001.a.com.spf.test", value: "v=spf1 ip4:192.0.2.3 -all" },
  ];

  it("a removed domain loses its authorisation at once, its records after they may be cached", () => {
    const { zone, published } = setup();
    published.apply(recorded("DomainAdded", { domain: "A.com", tenantId: "t" }, 0));
    published.apply(computed("a.com", set, 1000));
    expect(zone.lookup(authorizationName("a.com", "reports.test"), TYPE.TXT).kind).toBe("answer");
    published.apply(recorded("DomainRemoved", { domain: "a.com", tenantId: "t" }, 10_000));
    expect(zone.lookup(authorizationName("a.com", "reports.test"), TYPE.TXT).kind).toBe("nxdomain");
    // Two chained records of TTL 100 s: kept 200 s.
    expect(published.sweep(10_000 + 199_000)).toBe(0);
    expect(zone.lookup("a.com.spf.test", TYPE.TXT).kind).toBe("answer");
    expect(published.sweep(10_000 + 200_000)).toBe(3);
    for (const record of set) expect(zone.lookup(record.name, TYPE.TXT).kind).toBe("nxdomain");
    // Nothing left below the apex: the names between are gone too.
    expect(zone.lookup("com.spf.test", TYPE.TXT).kind).toBe("nxdomain");
    expect(zone.lookup("spf.test", TYPE.SOA).kind).toBe("answer");
  });

  it("a set switched back to before its retirement is served again, and not retired", () => {
    const { zone, published } = setup();
    const other = set.map((record) => ({ ...record, name: record.name.replace("00000001", "00000002") }));
    published.apply(computed("a.com", set, 0));
    published.apply(computed("a.com", other, 1000));
    published.apply(computed("a.com", set, 2000));
    published.sweep(1_000_000);
    for (const record of set) expect(zone.lookup(record.name, TYPE.TXT).kind).toBe("answer");
    expect(zone.lookup(other[1]!.name, TYPE.TXT).kind).toBe("nxdomain");
  });

  it("skips, and says so, a set with records outside the zone (computed before SAFE_SPF_ZONE was set)", () => {
    const { zone, published, skipped } = setup();
    published.apply(computed("a.com", [{ name: "a.com", value: "v=spf1 -all" }], 0));
    expect(skipped).toEqual(["a.com is not under spf.test"]);
    expect(zone.lookup("a.com.spf.test", TYPE.TXT).kind).toBe("nxdomain");
  });
});
