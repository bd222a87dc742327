/**
 * A deployment upgraded in place: sources named by an older version of the shipped map and
 * databases (SourceIpResolved v2, as that version wrote them) are named again at the next start,
 * as events, with no DNS; a replay then gives the same names.
 */
import { type SourceIpResolved, streams } from "@dmarc-ledger/events";
import { catchUp, rebuildBeside } from "@dmarc-ledger/projection-engine";
import { aggregateBySender } from "@dmarc-ledger/queries";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { createResolver } from "@dmarc-ledger/safe-spf";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports } from "../../../test/support/aggregate-report.js";
import { type Backend, backends } from "../../../test/support/service-harness.js";
import { knownSendersVersion } from "../src/known-senders.generated.js";
import { serviceMap } from "../src/service-map.js";
import { startSourceIpResolver } from "../src/source-ip-resolver.js";
import { lazySourceNamer } from "../src/source-namer.js";

const meta = { causedBy: "test" };
// Gmail's outbound, Amazon SES's, a private address a receiver reported, and Microsoft 365's outbound.
const ips = { google: "209.85.220.41", ses: "54.240.8.1", private: "192.168.1.1", m365: "40.107.22.53" };
const older = {
  serviceMap: "parsedmarc-00000000-sha256:0000000000000000",
  asnDatabase: "@ip-location-db/asn@2.3.2025010100",
  countryDatabase: "@ip-location-db/geo-whois-asn-country-mmdb@2.3.2025010100",
};
/** What the older version said: AS numbers as senders, and a country for a private address. */
const olderNamings: Record<string, object> = {
  [ips.google]: {
    baseDomain: null,
    service: null,
    asn: { number: 15169, organization: "GOOGLE" },
    country: "US",
  },
  [ips.ses]: {
    baseDomain: null,
    service: null,
    asn: { number: 14618, organization: "AMAZON-AES" },
    country: "US",
  },
  [ips.private]: { baseDomain: null, service: null, asn: null, country: "AU" },
  [ips.m365]: {
    baseDomain: null,
    service: null,
    asn: { number: 8075, organization: "Microsoft Corporation" },
    country: "US",
  },
};
/**
 * The version that named each source: Microsoft 365's by today's map and databases but the
 * tables before Microsoft 365's sending ranges and the map's aliases; a change of those alone renames.
 */
const current = lazySourceNamer(null).sources;
const namedBy = (ip: string) =>
  ip === ips.m365 ? { ...current, serviceMap: `${knownSendersVersion}+asn-services-1` } : older;

describe.each(backends)("renaming sources after an upgrade on %s", (_name, openBackend) => {
  let backend: Backend;
  let runtime: Runtime;
  let tenantId: string;
  const day = Date.UTC(2026, 9, 3) / 1000;
  const query = () => ({ tenantId, start: day, end: day + 86_399, page: 1, perPage: 100 });
  const answers = async (ip: string) =>
    (await runtime.store.readStream(streams.sourceIp(ip))).map((event) => event.data as SourceIpResolved);
  const senders = async () =>
    Object.fromEntries(
      (await aggregateBySender(runtime.db, query())).records.map((r) => [
        r.Service,
        { kind: r.SenderKind, namedBy: r.NamedBy, country: r.Country },
      ]),
    );
  const runResolver = async (until: () => Promise<boolean>) => {
    const errors: unknown[] = [];
    const appended: SourceIpResolved[] = [];
    const resolver = startSourceIpResolver({
      store: runtime.store,
      db: runtime.db,
      // Never asked: reverse DNS is off.
      resolver: createResolver({ nameservers: ["127.0.0.1:9"], timeoutMs: 50 }),
      namer: lazySourceNamer(null),
      reverseDns: false,
      ratePerSecond: 50,
      concurrency: 4,
      refreshAgeSeconds: 7 * 86_400,
      retryAgeSeconds: 3_600,
      onError: (error) => errors.push(error),
      onResolved: (answer) => appended.push(answer),
    });
    const deadline = Date.now() + 30_000;
    while (!(await until())) {
      if (Date.now() > deadline) throw new Error("timed out waiting for the resolver");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await resolver.stop();
    expect(errors).toEqual([]);
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    return appended;
  };

  beforeAll(async () => {
    backend = await openBackend();
    runtime = await openRuntime(backend.env);
    tenantId = (await createTenant(runtime.store, { name: "t", region: "global" }, meta)).tenantId;
    await addDomain(runtime.store, { tenantId, domain: "upgrade.test.com" }, meta);
    await appendAggregateReports(runtime.store, [
      aggregateReport({
        identity: "upgrade-1",
        domain: "upgrade.test.com",
        organization: "google.com",
        begin: day,
        end: day + 86_399,
        rows: Object.values(ips).map((sourceIp, index) => ({
          sourceIp,
          count: 10 + index,
          disposition: "none",
          policyDkim: "fail",
          policySpf: "fail",
        })),
      }),
    ]);
    const resolvedAt = new Date(Date.now() - 86_400_000).toISOString();
    for (const ip of Object.values(ips)) {
      await runtime.store.append(
        streams.sourceIp(ip),
        [
          {
            type: "SourceIpResolved",
            data: {
              ip,
              outcome: "nxdomain",
              ptrNames: [],
              name: null,
              confirmed: false,
              resolvedAt,
              naming: { ...olderNamings[ip], sources: namedBy(ip) },
            },
            metadata: { ...meta, schemaVersion: 2, occurredAt: resolvedAt },
          },
        ],
        "no_stream",
      );
    }
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
  });

  afterAll(async () => {
    await runtime?.close();
    await backend?.cleanup();
  });

  it("names every source again from the new map and databases, as events, without DNS", async () => {
    expect(await senders()).toEqual({
      GOOGLE: { kind: "asn", namedBy: "asn", country: "US" },
      "AMAZON-AES": { kind: "asn", namedBy: "asn", country: "US" },
      unknown: { kind: "unknown", namedBy: null, country: "AU" },
      "Microsoft Corporation": { kind: "asn", namedBy: "asn", country: "US" },
    });
    await runResolver(async () => {
      for (const ip of Object.values(ips)) if ((await answers(ip)).length < 2) return false;
      return true;
    });
    for (const ip of Object.values(ips)) {
      const [, renamed, ...more] = await answers(ip);
      expect(more).toEqual([]);
      // The DNS answer and its time are kept: DNS is asked again no sooner.
      expect(renamed).toMatchObject({ outcome: "nxdomain", resolvedAt: (await answers(ip))[0]!.resolvedAt });
      expect(renamed!.naming!.sources).not.toEqual(namedBy(ip));
      expect(renamed!.naming!.sources).toEqual(current);
    }
    expect(await senders()).toEqual({
      [serviceMap().serviceOf("google.com")!.name]: { kind: "service", namedBy: "asn", country: "US" },
      "Amazon.com, Inc.": { kind: "asn", namedBy: "asn", country: "US" },
      // A private address: no country now.
      unknown: { kind: "unknown", namedBy: null, country: "" },
      // Microsoft 365's sending range names its service, in Microsoft's AS.
      [serviceMap().serviceOf("outlook.com")!.name]: { kind: "service", namedBy: "asn", country: "US" },
    });
    const row = await runtime.db
      .selectFrom("source_ip_name")
      .select(["address_range", "country", "asn"])
      .where("source_ip", "=", ips.private)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ address_range: "private", country: null, asn: null });
  });

  it("renames nothing named by the current version, and a replay gives the same names", async () => {
    const again = await runResolver(async () => true);
    expect(again).toEqual([]);
    const before = await aggregateBySender(runtime.db, query());
    await rebuildBeside({
      store: runtime.store,
      db: runtime.db,
      projections: allProjections,
      concurrentSessions: backend.name === "PostgreSQL",
    });
    expect(await aggregateBySender(runtime.db, query())).toEqual(before);
  });
});
