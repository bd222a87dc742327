/**
 * Service, AS and country of report sources: named by the resolver from fixture reverse-DNS
 * zones served over loopback, the shipped service map (with a deployment's file over it) and the
 * databases installed from npm. Expectations are read by other paths: the CSV the map is
 * generated from, the databases' dotted-address CSV (not the integer one the service reads), and
 * maxmind's file API (not the in-memory reader the service uses).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError } from "@dmarc-ledger/config";
import { newEvent, type SourceIpResolved, streams } from "@dmarc-ledger/events";
import { catchUp, rebuildBeside } from "@dmarc-ledger/projection-engine";
import { aggregateBySource } from "@dmarc-ledger/queries";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { createResolver } from "@dmarc-ledger/safe-spf";
import { type FixtureDnsServer, startFixtureDnsServer } from "@dmarc-ledger/safe-spf/testing";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import ipaddr from "ipaddr.js";
import maxmind, { type CountryResponse } from "maxmind";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports } from "../../../test/support/aggregate-report.js";
import { type Backend, backends } from "../../../test/support/service-harness.js";
import { reverseName } from "../src/reverse-name.js";
import { readServiceMapFile } from "../src/service-map-file.js";
import { sourceIpResolverSettingsFromEnv } from "../src/settings.js";
import { type RunningSourceIpResolver, startSourceIpResolver } from "../src/source-ip-resolver.js";
import { lazySourceNamer } from "../src/source-namer.js";

const meta = { causedBy: "test" };
const require = createRequire(import.meta.url);
const originMap = fileURLToPath(new URL("../known-senders/base_reverse_dns_map.csv", import.meta.url));

const ips = {
  google: "209.85.220.41",
  ses: "54.240.8.1",
  // The deployment's file names this one (a documentation address: no AS holds it).
  local: "192.0.2.10",
  // Its PTR claims google.com, whose A records say otherwise: no service, but its own AS.
  spoofed: "8.8.4.4",
  ipv6: "2001:4860:4860::8844",
  noName: "1.1.1.1",
};

const zones = {
  [reverseName(ips.google)]: [{ PTR: "mail-sor-f41.google.com" }],
  "mail-sor-f41.google.com": [{ A: ips.google }],
  [reverseName(ips.ses)]: [{ PTR: "a8-1.smtp-out.amazonses.com" }],
  "a8-1.smtp-out.amazonses.com": [{ A: ips.ses }],
  [reverseName(ips.local)]: [{ PTR: "mx1.good-sender.com" }],
  "mx1.good-sender.com": [{ A: ips.local }],
  [reverseName(ips.spoofed)]: [{ PTR: "mail.google.com" }],
  "mail.google.com": [{ A: "142.250.10.27" }],
  [reverseName(ips.ipv6)]: [{ PTR: "dns.google" }],
  "dns.google": [{ AAAA: ips.ipv6 }],
};

/** The origin CSV's service for a base domain, read line by line (names with commas are quoted). */
function originService(baseDomain: string): { name: string; type: string } | null {
  const line = readFileSync(originMap, "utf8")
    .split("\n")
    .find((candidate) => candidate.toLowerCase().startsWith(`${baseDomain},`));
  if (!line) return null;
  const match = /^[^,]+,("(?:[^"]|"")*"|[^,]*),(.*)$/.exec(line.trim())!;
  const unquote = (cell: string) => (cell.startsWith('"') ? cell.slice(1, -1).replaceAll('""', '"') : cell);
  return { name: unquote(match[1]!), type: unquote(match[2]!) };
}

/** The AS of each address from the database's dotted-address files, compared byte by byte. */
function databaseAsns(addresses: string[]): Map<string, { number: number; organization: string } | null> {
  const dir = dirname(require.resolve("@ip-location-db/asn/package.json"));
  const compare = (a: number[], b: number[]) => {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
    return 0;
  };
  const found = new Map<string, { number: number; organization: string } | null>();
  for (const ip of addresses) found.set(ip, null);
  for (const file of ["asn-ipv4.csv", "asn-ipv6.csv"]) {
    for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
      const [first, last, asn, ...rest] = line.split(",");
      if (!first || !last || !asn) continue;
      const low = ipaddr.parse(first).toByteArray();
      const high = ipaddr.parse(last).toByteArray();
      for (const ip of addresses) {
        const bytes = ipaddr.parse(ip).toByteArray();
        if (bytes.length !== low.length || found.get(ip)) continue;
        if (compare(low, bytes) <= 0 && compare(bytes, high) <= 0) {
          const organization = rest.join(",");
          found.set(ip, {
            number: Number(asn),
            organization: organization.startsWith('"')
              ? organization.slice(1, -1).replaceAll('""', '"')
              : organization,
          });
        }
      }
    }
  }
  return found;
}

const installedVersion = (name: string) =>
  `${name}@${(JSON.parse(readFileSync(require.resolve(`${name}/package.json`), "utf8")) as { version: string }).version}`;

describe("the map file setting", () => {
  it("is read and checked at start, every problem named", () => {
    const dir = mkdtempSync(join(tmpdir(), "service-map-"));
    const bad = join(dir, "bad.csv");
    writeFileSync(bad, "base_reverse_dns,name,type\nnot a domain,X,SaaS\nok.example,,SaaS\n");
    let thrown: unknown;
    try {
      sourceIpResolverSettingsFromEnv({ SENDER_SERVICE_MAP_FILE: bad, SOURCE_IP_RESOLVE_RATE: "0" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const problems = (thrown as ConfigError).problems;
    expect(problems.map((problem) => problem.variable).sort()).toEqual([
      "SENDER_SERVICE_MAP_FILE",
      "SOURCE_IP_RESOLVE_RATE",
    ]);
    expect(problems.find((p) => p.variable === "SENDER_SERVICE_MAP_FILE")?.message).toMatch(
      /line 2: "not a domain" is not a domain name; line 3: a service needs a name and a type/,
    );
    expect(() => sourceIpResolverSettingsFromEnv({ SENDER_SERVICE_MAP_FILE: join(dir, "none.csv") })).toThrow(
      /SENDER_SERVICE_MAP_FILE: cannot read .*none.csv/,
    );
  });
});

describe.each(backends)("naming report sources on %s", (_name, openBackend) => {
  let backend: Backend;
  let runtime: Runtime;
  let dns: FixtureDnsServer;
  let dnsClosed = false;
  let resolver: RunningSourceIpResolver | null = null;
  let tenantId: string;
  const errors: unknown[] = [];
  const day = Date.UTC(2026, 9, 2) / 1000;
  const query = () => ({ tenantId, start: day, end: day + 86_399, page: 1, perPage: 100 });
  const mapFile = join(mkdtempSync(join(tmpdir(), "service-map-")), "ours.csv");
  const answers = async (ip: string) =>
    (await runtime.store.readStream(streams.sourceIp(ip))).map((event) => event.data as SourceIpResolved);
  const records = async () =>
    Object.fromEntries(
      (await aggregateBySource(runtime.db, query())).records.map((record) => [
        record.SourceIp,
        {
          Service: record.Service,
          ServiceType: record.ServiceType,
          ASN: record.ASN,
          ASNOrganization: record.ASNOrganization,
          Country: record.Country,
        },
      ]),
    );

  beforeAll(async () => {
    writeFileSync(
      mapFile,
      'base_reverse_dns,name,type\ngood-sender.com,"Good Sender CRM, hosted",SaaS\namazonses.com,Our SES,Email Provider\n',
    );
    backend = await openBackend();
    runtime = await openRuntime(backend.env);
    dns = await startFixtureDnsServer(zones);
    tenantId = (await createTenant(runtime.store, { name: "t", region: "global" }, meta)).tenantId;
    await addDomain(runtime.store, { tenantId, domain: "naming.test.com" }, meta);
    await appendAggregateReports(runtime.store, [
      aggregateReport({
        identity: "naming-1",
        domain: "naming.test.com",
        organization: "google.com",
        begin: day,
        end: day + 86_399,
        rows: Object.values(ips).map((sourceIp, index) => ({
          sourceIp,
          count: 10 + index,
          disposition: "none",
          policyDkim: "fail",
          policySpf: "pass",
        })),
      }),
    ]);
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
  });

  afterAll(async () => {
    await resolver?.stop();
    if (!dnsClosed) await dns?.close();
    await runtime?.close();
    await backend?.cleanup();
  });

  it("names each source's service, AS and country, with the versions that said so", async () => {
    resolver = startSourceIpResolver({
      store: runtime.store,
      db: runtime.db,
      resolver: createResolver({ nameservers: [dns.address], timeoutMs: 500, retries: 0 }),
      namer: lazySourceNamer(readServiceMapFile(mapFile)),
      ratePerSecond: 50,
      concurrency: 4,
      refreshAgeSeconds: 7 * 86_400,
      retryAgeSeconds: 3_600,
      onError: (error) => errors.push(error),
    });
    const deadline = Date.now() + 30_000;
    // Each source is named at first sight (not_asked), then again with DNS's answer.
    const answered = async (ip: string) => (await answers(ip)).some((a) => a.outcome !== "not_asked");
    for (const ip of Object.values(ips)) {
      while (!(await answered(ip))) {
        if (Date.now() > deadline) throw new Error(`no answer for ${ip}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    await resolver.stop();
    resolver = null;
    expect(errors).toEqual([]);

    const asns = databaseAsns(Object.values(ips));
    const countries = await maxmind.open<CountryResponse & { country_code?: string }>(
      join(
        dirname(require.resolve("@ip-location-db/geo-whois-asn-country-mmdb/package.json")),
        "geo-whois-asn-country.mmdb",
      ),
    );
    const local = { name: "Good Sender CRM, hosted", type: "SaaS" };
    const expectedServices: Record<string, { name: string; type: string } | null> = {
      [ips.google]: originService("google.com"),
      [ips.ses]: { name: "Our SES", type: "Email Provider" },
      [ips.local]: local,
      // Its name is not confirmed: its AS, Google's mail AS, names it.
      [ips.spoofed]: originService("google.com"),
      // dns.google is not in the map: Google's mail AS names it.
      [ips.ipv6]: originService("google.com"),
      [ips.noName]: null,
    };
    const expectedNamedBy: Record<string, string> = {
      [ips.google]: "rdns",
      [ips.ses]: "rdns",
      [ips.local]: "rdns",
      [ips.spoofed]: "asn",
      [ips.ipv6]: "asn",
      // Cloudflare's AS carries no one mail service: its organisation names it.
      [ips.noName]: "asn",
    };
    expect(expectedServices[ips.google]).not.toBeNull();
    expect(originService("dns.google")).toBeNull();
    // Stable owners, as a check of the reading above.
    expect(asns.get(ips.spoofed)?.number).toBe(15169);
    expect(asns.get(ips.local)).toBeNull();

    const sources = {
      serviceMap: expect.stringMatching(
        /^parsedmarc-6358c364-sha256:[0-9a-f]{16}\+aliases-1\+local-sha256:[0-9a-f]{16}\+asn-services-2$/,
      ),
      asnDatabase: installedVersion("@ip-location-db/asn"),
      countryDatabase: installedVersion("@ip-location-db/geo-whois-asn-country-mmdb"),
    };
    // A documentation address is on no network: no AS, no country.
    const countryOf = (ip: string) => (ip === ips.local ? null : (countries.get(ip)?.country_code ?? null));
    for (const ip of Object.values(ips)) {
      const [first, answer, ...more] = await answers(ip);
      expect(more, ip).toEqual([]);
      expect(first, ip).toMatchObject({ outcome: "not_asked", name: null, confirmed: false });
      expect(first?.naming?.asn, ip).toEqual(asns.get(ip));
      expect(first?.naming?.country, ip).toBe(countryOf(ip));
      expect(answer?.naming, ip).toEqual({
        baseDomain: answer!.confirmed ? answer!.name!.split(".").slice(-2).join(".") : null,
        service: expectedServices[ip],
        asn: asns.get(ip),
        country: countryOf(ip),
        sources,
        namedBy: expectedNamedBy[ip],
        authDomain: null,
        addressRange: ip === ips.local ? "reserved" : null,
      });
    }

    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    const shown = await records();
    for (const ip of Object.values(ips)) {
      const asn = asns.get(ip);
      expect(shown[ip], ip).toEqual({
        Service: expectedServices[ip]?.name ?? "",
        ServiceType: expectedServices[ip]?.type ?? "",
        ASN: asn ? String(asn.number) : "",
        ASNOrganization: asn?.organization ?? "",
        Country: countryOf(ip) ?? "",
      });
    }
  });

  it("gives the same names on replay, from the events, whatever the databases say now", async () => {
    // An answer named by older databases: the replay keeps what they said.
    const older: SourceIpResolved = {
      ip: ips.noName,
      outcome: "found",
      ptrNames: ["one.one.one.one"],
      name: "one.one.one.one",
      confirmed: true,
      resolvedAt: new Date().toISOString(),
      naming: {
        baseDomain: "one.one.one",
        service: { name: "Old Name", type: "ISP" },
        asn: { number: 64_512, organization: "Old Org" },
        country: "ZZ",
        sources: { serviceMap: "old", asnDatabase: "old-asn", countryDatabase: "old-country" },
      },
    };
    const stream = streams.sourceIp(ips.noName);
    const revision = (await runtime.store.readStream(stream)).at(-1)!.revision;
    await runtime.store.append(stream, [newEvent("SourceIpResolved", older, meta)], revision);
    // An answer written before v2 (no naming) for another address, as an older version wrote it.
    const v1Stream = streams.sourceIp("192.0.2.200");
    await runtime.store.append(
      v1Stream,
      [
        {
          type: "SourceIpResolved",
          data: {
            ip: "192.0.2.200",
            outcome: "nxdomain",
            ptrNames: [],
            name: null,
            confirmed: false,
            resolvedAt: older.resolvedAt,
          },
          metadata: { ...meta, schemaVersion: 1, occurredAt: older.resolvedAt },
        },
      ],
      "no_stream",
    );
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    const before = await aggregateBySource(runtime.db, query());
    expect((await records())[ips.noName]).toEqual({
      Service: "Old Name",
      ServiceType: "ISP",
      ASN: "64512",
      ASNOrganization: "Old Org",
      Country: "ZZ",
    });
    await dns.close();
    dnsClosed = true;
    await rebuildBeside({
      store: runtime.store,
      db: runtime.db,
      projections: allProjections,
      concurrentSessions: backend.name === "PostgreSQL",
    });
    expect(await aggregateBySource(runtime.db, query())).toEqual(before);
    const v1 = await runtime.db
      .selectFrom("source_ip_name")
      .select(["service_name", "asn", "country", "naming_sources"])
      .where("source_ip", "=", "192.0.2.200")
      .executeTakeFirstOrThrow();
    expect(v1).toEqual({ service_name: null, asn: null, country: null, naming_sources: null });
  });
});
