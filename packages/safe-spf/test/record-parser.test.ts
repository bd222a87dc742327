import { describe, expect, it } from "vitest";
import { parseSpfRecord, SpfSyntaxError, toTxtStrings } from "../src/index.js";

describe("parseSpfRecord", () => {
  it("reads every mechanism, qualifier and modifier", () => {
    const record = parseSpfRecord(
      "v=spf1 +a -mx:mx.example.com/24 ~ptr ?exists:%{i}._ip.%{d} ip4:192.0.2.0/24 ip6:2001:db8::/32 include:_spf.example.com a:host.example.com/24//64 mx//56 all redirect=_spf.example.org exp=exp.%{d2} x-note=%{l}",
    );
    expect(record.mechanisms.map((m) => `${m.qualifier}${m.kind}`)).toEqual([
      "+a",
      "-mx",
      "~ptr",
      "?exists",
      "+ip4",
      "+ip6",
      "+include",
      "+a",
      "+mx",
      "+all",
    ]);
    expect(record.mechanisms[1]).toMatchObject({ domainSpec: "mx.example.com", cidr4: 24, cidr6: 128 });
    expect(record.mechanisms[4]).toMatchObject({ address: "192.0.2.0", cidr4: 24 });
    expect(record.mechanisms[5]).toMatchObject({ address: "2001:db8::", cidr6: 32 });
    expect(record.mechanisms[7]).toMatchObject({ domainSpec: "host.example.com", cidr4: 24, cidr6: 64 });
    expect(record.mechanisms[8]).toMatchObject({ cidr4: 32, cidr6: 56 });
    expect(record.mechanisms[8]!.domainSpec).toBeUndefined();
    expect(record.redirect?.value).toBe("_spf.example.org");
    expect(record.exp?.value).toBe("exp.%{d2}");
    expect(record.terms.at(-1)).toMatchObject({ type: "modifier", name: "x-note", value: "%{l}" });
  });

  it.each([
    ["v=spf1 ip4:192.0.2.1 a/33 -all", "a/33", 21],
    ["v=spf1 -all moo", "moo", 12],
    ["v=spf1 ip4:1.2.3", "ip4:1.2.3", 7],
    ["v=spf1 a:foo.example.com/24/64", "a:foo.example.com/24/64", 7],
    ["v=spf1  include:%{z}.example.com", "include:%{z}.example.com", 8],
    ["v=spf1 exp=a.example.com exp=b.example.com", "exp=b.example.com", 25],
    ["v=spf1 ip6::CAFE::BABE", "ip6::CAFE::BABE", 7],
    ["v=spf1 a:museum", "a:museum", 7],
    ["v=spf1 ptr/0", "ptr/0", 7],
  ])("%s is rejected naming term and position", (text, term, position) => {
    let error: unknown;
    try {
      parseSpfRecord(text);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SpfSyntaxError);
    expect(error).toMatchObject({ term, position });
  });

  it("refuses text that is not an SPF record", () => {
    expect(() => parseSpfRecord("v=spf10 -all")).toThrow(SpfSyntaxError);
  });
});

describe("toTxtStrings", () => {
  it("cuts long records into strings of at most 255 bytes that join back", () => {
    const value = `v=spf1 ${Array.from({ length: 40 }, (_, i) => `ip4:198.51.${i}.0/24`).join(" ")} -all`;
    const strings = toTxtStrings(value);
    expect(strings.length).toBeGreaterThan(1);
    expect(strings.join("")).toBe(value);
    for (const text of strings) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(255);
  });
});
