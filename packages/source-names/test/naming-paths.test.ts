/**
 * What names a source, path by path, with real public addresses of real mail services against
 * the installed databases and the shipped map: its forward-confirmed name, the passing
 * authentication domains the reports carry for it, its AS; and the special-purpose ranges, which
 * no database can place. The services' names are read from the shipped map, not written here.
 */
import type { AggregateRowRecord } from "@dmarc-ledger/events";
import { beforeAll, describe, expect, it } from "vitest";
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
    // The same name, not confirmed, names nothing by itself: Microsoft's AS names the address.
    expect(namer.name("40.107.22.53", { name: "mail.google.com", confirmed: false })).toMatchObject({
      baseDomain: null,
      service: null,
      namedBy: "asn",
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

  it("else by its AS: a mail service's own AS by that service, another by its organisation (asn)", () => {
    const byAs = (ip: string) => namer.name(ip, noName);
    expect(byAs("167.89.100.1")).toMatchObject({ service: mapped("sendgrid.net"), namedBy: "asn" });
    expect(byAs("205.201.131.1")).toMatchObject({ service: mapped("mcsv.net"), namedBy: "asn" });
    expect(byAs("209.85.128.1")).toMatchObject({ service: mapped("google.com"), namedBy: "asn" });
    // Microsoft 365's outbound range shares Microsoft's AS with Azure: named by the organisation.
    expect(byAs("40.107.22.53")).toMatchObject({
      service: null,
      namedBy: "asn",
      asn: { number: 8075, organization: "Microsoft Corporation" },
    });
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
