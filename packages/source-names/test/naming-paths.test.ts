/**
 * What names a source, path by path, with real public addresses of real mail services against
 * the installed databases and the shipped map: its forward-confirmed name, the passing
 * authentication domains the reports carry for it, its AS; and the special-purpose ranges, which
 * no database can place. The services' names are read from the shipped map, not written here.
 */
import type { AggregateRowRecord } from "@dmarc-ledger/events";
import ipaddr from "ipaddr.js";
import { beforeAll, describe, expect, it } from "vitest";
import { sendingRanges } from "../src/asn-services.js";
import { authEvidenceByIp } from "../src/auth-evidence.js";
import { openNetworkDatabases } from "../src/network-databases.js";
import { serviceMap } from "../src/service-map.js";
import { type SourceNamer, sourceNamer } from "../src/source-namer.js";

const services = serviceMap();
const mapped = (domain: string) => services.serviceOf(domain);
const noName = { name: null, confirmed: false };

let namer: SourceNamer;
beforeAll(async () => {
  namer = sourceNamer(services, await openNetworkDatabases());
});

const row = (
  sourceIp: string,
  count: number,
  dkim: [string, string][],
  spf: [string, string][],
): AggregateRowRecord => ({
  sourceIp,
  count,
  disposition: "none",
  policyDkim: "pass",
  policySpf: "pass",
  reasons: [],
  arc: null,
  headerFrom: "example.com",
  envelopeFrom: null,
  envelopeTo: null,
  dkim: dkim.map(([domain, result]) => ({ domain, selector: null, result, humanResult: null })),
  spf: spf.map(([domain, result]) => ({ domain, scope: "mfrom", result })),
});

describe("naming a source", () => {
  it("by its forward-confirmed reverse name first (rdns)", () => {
    const naming = namer.name("209.85.220.41", { name: "mail-sor-f41.google.com", confirmed: true });
    expect(naming).toMatchObject({
      baseDomain: "google.com",
      service: mapped("google.com"),
      namedBy: "rdns",
      asn: { number: 15169, organization: "Google LLC" },
      country: "US",
      addressRange: null,
    });
    // The same name, not confirmed, names nothing by itself: Amazon's AS names the address.
    expect(namer.name("54.240.8.1", { name: "mail.google.com", confirmed: false })).toMatchObject({
      baseDomain: null,
      service: null,
      namedBy: "asn",
      asn: { number: 14618 },
    });
  });

  it("else by the passing authentication domain in the map that most messages carry (auth_domain)", () => {
    // Amazon SES's sending range: Amazon's AS also hosts everyone's EC2, so the AS names no service.
    const ses = "54.240.8.1";
    const evidence = authEvidenceByIp([
      row(
        ses,
        40,
        [
          ["example.com", "pass"],
          ["amazonses.com", "pass"],
        ],
        [["eu-west-1.amazonses.com", "pass"]],
      ),
      row(ses, 5, [["sendgrid.net", "pass"]], []),
      // A failing result is no evidence: anyone can write any d= or MAIL FROM.
      row(ses, 500, [["mcsv.net", "fail"]], [["mailchimp.com", "softfail"]]),
    ]).get(ses);
    expect(evidence).toEqual(
      new Map([
        ["example.com", 40],
        ["amazonses.com", 40],
        ["sendgrid.net", 5],
      ]),
    );
    expect(namer.name(ses, noName, evidence)).toMatchObject({
      service: mapped("amazonses.com"),
      namedBy: "auth_domain",
      authDomain: "amazonses.com",
      asn: { number: 14618, organization: "Amazon.com, Inc." },
    });
    expect(mapped("amazonses.com")?.name).toBe("Amazon SES");
  });

  it("names a Microsoft 365 tenant's own domain (d=<tenant>.onmicrosoft.com) as Microsoft 365 (auth_domain)", () => {
    // An Azure address of Microsoft's AS, not in Microsoft 365's sending ranges.
    const azure = "20.1.1.1";
    const evidence = authEvidenceByIp([
      row(azure, 12, [["contoso.onmicrosoft.com", "pass"]], [["contoso.com", "pass"]]),
    ]).get(azure);
    expect(namer.name(azure, noName, evidence)).toMatchObject({
      service: mapped("outlook.com"),
      namedBy: "auth_domain",
      authDomain: "onmicrosoft.com",
    });
    // protection.outlook.com's registrable domain is outlook.com, in the map.
    const relayed = authEvidenceByIp([row(azure, 3, [], [["eur.protection.outlook.com", "pass"]])]).get(
      azure,
    );
    expect(namer.name(azure, noName, relayed)).toMatchObject({
      service: mapped("outlook.com"),
      namedBy: "auth_domain",
      authDomain: "outlook.com",
    });
  });

  it("else by its AS: a mail service's own AS by that service, another by its organisation (asn)", () => {
    const byAs = (ip: string) => namer.name(ip, noName);
    expect(byAs("167.89.100.1")).toMatchObject({ service: mapped("sendgrid.net"), namedBy: "asn" });
    expect(byAs("205.201.131.1")).toMatchObject({ service: mapped("mcsv.net"), namedBy: "asn" });
    expect(byAs("209.85.128.1")).toMatchObject({ service: mapped("google.com"), namedBy: "asn" });
    // Microsoft 365's outbound ranges share Microsoft's AS with Azure: the published sending
    // ranges name Microsoft 365 (IPv4 and IPv6), any other address of the AS its organisation.
    for (const ip of [
      "40.107.22.53",
      "40.92.18.20",
      "52.100.165.230",
      "104.47.1.1",
      "2a01:111:f403:c000::1",
    ]) {
      expect(byAs(ip), ip).toMatchObject({
        service: mapped("outlook.com"),
        namedBy: "asn",
        asn: { number: 8075, organization: "Microsoft Corporation" },
      });
    }
    // Azure, in the same AS.
    expect(byAs("20.1.1.1")).toMatchObject({
      service: null,
      namedBy: "asn",
      asn: { number: 8075, organization: "Microsoft Corporation" },
    });
    expect(mapped("outlook.com")?.name).toMatch(/Microsoft 365/);
    // Each published range is in Microsoft's AS by the installed database, first address to last.
    for (const [cidr, domain] of sendingRanges) {
      const [network, bits] = ipaddr.parseCIDR(cidr);
      const bytes = network.toByteArray();
      const last = bytes.map((byte, i) => {
        const hostBits = Math.min(8, Math.max(0, (i + 1) * 8 - bits));
        return byte | ((1 << hostBits) - 1);
      });
      for (const ip of [network.toString(), ipaddr.fromByteArray(last).toString()]) {
        expect(byAs(ip), `${cidr}: ${ip}`).toMatchObject({ service: mapped(domain), asn: { number: 8075 } });
      }
    }
    expect(byAs("54.240.8.1")).toMatchObject({
      service: null,
      namedBy: "asn",
      asn: { number: 14618, organization: "Amazon.com, Inc." },
    });
    for (const domain of ["sendgrid.net", "mcsv.net", "google.com"]) expect(mapped(domain)).not.toBeNull();
  });

  it("gives special-purpose addresses no AS, country or service, and says which range", async () => {
    const ranges = {
      "192.168.1.1": "private",
      "10.0.0.1": "private",
      "100.64.1.1": "carrierGradeNat",
      "127.0.0.1": "loopback",
      "169.254.1.1": "linkLocal",
      "192.0.2.5": "reserved",
      "198.51.100.7": "reserved",
      "203.0.113.9": "reserved",
      "2001:db8::1": "reserved",
      "fe80::1": "linkLocal",
      "fc00::1": "uniqueLocal",
      "::ffff:192.168.0.1": "private",
    };
    const databases = await openNetworkDatabases();
    // What the databases alone say of some of them: a country where there is none.
    expect(
      ["192.168.1.1", "198.51.100.7", "203.0.113.9", "2001:db8::1"].map(databases.countryOf),
    ).not.toContain(null);
    for (const [ip, range] of Object.entries(ranges)) {
      expect(namer.name(ip, noName, new Map([["google.com", 100]])), ip).toMatchObject({
        asn: null,
        country: null,
        service: null,
        namedBy: null,
        authDomain: null,
        addressRange: range,
      });
    }
    expect(namer.name("8.8.8.8", noName).addressRange).toBeNull();
  });
});
