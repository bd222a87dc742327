import type { SourceIpResolved } from "@dmarc-ledger/events";
import { newEvent, streams } from "@dmarc-ledger/events";
import { catchUp, rebuildBeside } from "@dmarc-ledger/projection-engine";
import { aggregateBySource } from "@dmarc-ledger/queries";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { createResolver } from "@dmarc-ledger/safe-spf";
import {
  type FixtureDnsServer,
  type FixtureZones,
  startFixtureDnsServer,
} from "@dmarc-ledger/safe-spf/testing";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports } from "../../../test/support/aggregate-report.js";
import { type Backend, backends } from "../../../test/support/service-harness.js";
import { reverseName } from "../src/reverse-name.js";
import { type RunningSourceIpResolver, startSourceIpResolver } from "../src/source-ip-resolver.js";
import { lazySourceNamer } from "../src/source-namer.js";

const meta = { causedBy: "test" };

const ips = {
  confirmed: "192.0.2.1",
  spoofed: "192.0.2.2",
  nxdomain: "192.0.2.3",
  timeout: "192.0.2.4",
  secondNameConfirmed: "192.0.2.5",
  publicSuffix: "198.51.100.7",
  ipv6: "2001:db8::25",
};

const zones: FixtureZones = {
  [reverseName(ips.confirmed)]: [{ PTR: "mail.good-sender.com" }],
  "mail.good-sender.com": [{ A: ips.confirmed }],
  // Anyone can set the PTR of their own address to a big provider's name; its A records say no.
  [reverseName(ips.spoofed)]: [{ PTR: "mail.google.com" }],
  "mail.google.com": [{ A: "142.250.10.27" }],
  [reverseName(ips.timeout)]: ["TIMEOUT"],
  [reverseName(ips.secondNameConfirmed)]: [{ PTR: "stale.example.org" }, { PTR: "smtp.second-name.org" }],
  "smtp.second-name.org": [{ A: ips.secondNameConfirmed }],
  [reverseName(ips.publicSuffix)]: [{ PTR: "relay.mail.sender.co.uk." }],
  "relay.mail.sender.co.uk": [{ A: ips.publicSuffix }],
  [reverseName(ips.ipv6)]: [{ PTR: "mx.v6-sender.net" }],
  // Another spelling of the same address.
  "mx.v6-sender.net": [{ AAAA: "2001:0db8:0000:0000:0000:0000:0000:0025" }],
};

const expectedDomains: Record<string, string> = {
  [ips.confirmed]: "good-sender.com",
  [ips.spoofed]: "",
  [ips.nxdomain]: "",
  [ips.timeout]: "",
  [ips.secondNameConfirmed]: "second-name.org",
  [ips.publicSuffix]: "sender.co.uk",
  [ips.ipv6]: "v6-sender.net",
};

async function until(what: string, condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(backends)("the source-IP resolver on %s", (_name, openBackend) => {
  let backend: Backend;
  let runtime: Runtime;
  let dns: FixtureDnsServer;
  let resolver: RunningSourceIpResolver | null = null;
  let tenantId: string;
  const errors: unknown[] = [];
  const day = Date.UTC(2026, 9, 1) / 1000;
  const query = () => ({ tenantId, start: day, end: day + 86_399, page: 1, perPage: 100 });

  const answers = async (ip: string) =>
    (await runtime.store.readStream(streams.sourceIp(ip))).map((event) => event.data as SourceIpResolved);
  const sourceDomains = async () => {
    const page = await aggregateBySource(runtime.db, query());
    return Object.fromEntries(page.records.map((record) => [record.SourceIp, record.SourceDomain]));
  };
  /** An answer another process appended (no name), which the read model does not show yet. */
  const appendNxdomainAnswer = (ip: string) =>
    runtime.store.append(
      streams.sourceIp(ip),
      [
        newEvent(
          "SourceIpResolved",
          {
            ip,
            outcome: "nxdomain",
            ptrNames: [],
            name: null,
            confirmed: false,
            resolvedAt: new Date().toISOString(),
            naming: null,
          },
          meta,
        ),
      ],
      "no_stream",
    );
  const start = (overrides: Partial<Parameters<typeof startSourceIpResolver>[0]> = {}) =>
    startSourceIpResolver({
      store: runtime.store,
      db: runtime.db,
      resolver: createResolver({ nameservers: [dns.address], timeoutMs: 200, retries: 0 }),
      ratePerSecond: 50,
      concurrency: 4,
      refreshAgeSeconds: 7 * 86_400,
      retryAgeSeconds: 3_600,
      timeoutRetries: 2,
      retryDelayMs: 20,
      onError: (error) => errors.push(error),
      ...overrides,
    });

  beforeAll(async () => {
    backend = await openBackend();
    runtime = await openRuntime(backend.env);
    dns = await startFixtureDnsServer(zones);
    tenantId = (await createTenant(runtime.store, { name: "t", region: "global" }, meta)).tenantId;
    await addDomain(runtime.store, { tenantId, domain: "names.test.com" }, meta);
    await appendAggregateReports(runtime.store, [
      aggregateReport({
        identity: "names-1",
        domain: "names.test.com",
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
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
  });

  afterEach(() => {
    expect(errors).toEqual([]);
  });

  afterAll(async () => {
    await resolver?.stop();
    await dns?.close();
    await runtime?.close();
    await backend?.cleanup();
  });

  it("resolves every source IP once, forward-confirmed, and shows only confirmed names", async () => {
    expect(Object.values(await sourceDomains()).every((domain) => domain === "")).toBe(true);
    resolver = start();
    await until("an answer for every source IP", async () => {
      for (const ip of Object.values(ips)) if ((await answers(ip)).length === 0) return false;
      return true;
    });
    await resolver.stop();
    resolver = null;

    const [confirmed] = await answers(ips.confirmed);
    expect(confirmed).toMatchObject({
      ip: ips.confirmed,
      outcome: "found",
      ptrNames: ["mail.good-sender.com"],
      name: "mail.good-sender.com",
      confirmed: true,
    });
    expect(Date.parse(confirmed!.resolvedAt)).not.toBeNaN();
    expect((await answers(ips.spoofed))[0]).toMatchObject({
      outcome: "found",
      name: "mail.google.com",
      confirmed: false,
    });
    expect((await answers(ips.nxdomain))[0]).toMatchObject({
      outcome: "nxdomain",
      ptrNames: [],
      name: null,
      confirmed: false,
    });
    expect((await answers(ips.timeout))[0]).toMatchObject({ outcome: "timeout", name: null });
    // The first try and two retries after backoff.
    const timeoutQueries = dns.queryLog.filter((q) => q.name === reverseName(ips.timeout)).length;
    expect(timeoutQueries).toBe(3);
    expect((await answers(ips.secondNameConfirmed))[0]).toMatchObject({
      ptrNames: ["stale.example.org", "smtp.second-name.org"],
      name: "smtp.second-name.org",
      confirmed: true,
    });
    expect((await answers(ips.ipv6))[0]).toMatchObject({ name: "mx.v6-sender.net", confirmed: true });
    for (const ip of Object.values(ips)) expect(await answers(ip)).toHaveLength(1);

    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    expect(await sourceDomains()).toEqual(expectedDomains);
  });

  it("gives the same SourceDomain on replay with the DNS server stopped", async () => {
    const before = await aggregateBySource(runtime.db, query());
    await dns.close();
    await rebuildBeside({
      store: runtime.store,
      db: runtime.db,
      projections: allProjections,
      concurrentSessions: backend.name === "PostgreSQL",
    });
    const after = await aggregateBySource(runtime.db, query());
    expect(after).toEqual(before);
    expect(await sourceDomains()).toEqual(expectedDomains);

    // Started again, it finds every answer in force and asks nothing (the server is gone).
    const appended: SourceIpResolved[] = [];
    resolver = start({ sweepIntervalMs: 20, onResolved: (answer) => appended.push(answer) });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await resolver.stop();
    resolver = null;
    expect(appended).toEqual([]);
  });

  it("asks again once answers are of age, keeping the last name through a timeout", async () => {
    dns = await startFixtureDnsServer({
      ...zones,
      // The good sender's reverse zone now times out; the spoofer's name now resolves back to it.
      [reverseName(ips.confirmed)]: ["TIMEOUT"],
      "mail.google.com": [{ A: ips.spoofed }],
      [reverseName(ips.timeout)]: [{ PTR: "late.answer.net" }],
      "late.answer.net": [{ A: ips.timeout }],
    });
    const eightDaysOn = new Date(Date.now() + 8 * 86_400_000);
    // Two processes at once: the expected revision lets one answer per IP through.
    resolver = start({ now: () => eightDaysOn, sweepIntervalMs: 20 });
    const other = start({ now: () => eightDaysOn, sweepIntervalMs: 20 });
    await until("second answers for every source IP", async () => {
      for (const ip of Object.values(ips)) if ((await answers(ip)).length < 2) return false;
      return true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await Promise.all([resolver.stop(), other.stop()]);
    resolver = null;
    for (const ip of Object.values(ips)) expect(await answers(ip)).toHaveLength(2);

    const [, second] = await answers(ips.confirmed);
    expect(second).toMatchObject({ outcome: "timeout", resolvedAt: eightDaysOn.toISOString() });
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    expect(await sourceDomains()).toEqual({
      ...expectedDomains,
      [ips.confirmed]: "good-sender.com",
      [ips.spoofed]: "google.com",
      [ips.timeout]: "answer.net",
    });
  });

  it("does not double an answer the read model does not show yet", async () => {
    const ip = "192.0.2.99";
    await appendNxdomainAnswer(ip);
    await appendAggregateReports(runtime.store, [
      aggregateReport({
        identity: "names-2",
        domain: "names.test.com",
        organization: "google.com",
        begin: day,
        end: day + 86_399,
        rows: [{ sourceIp: ip, count: 1, disposition: "none", policyDkim: "pass", policySpf: "pass" }],
      }),
    ]);
    const head = (await runtime.store.headPosition())!;
    resolver = start();
    await until("the resolver to pass the report", async () => {
      const row = await runtime.db
        .selectFrom("projection_checkpoint")
        .select("position")
        .where("projection", "=", "process:source_ip_resolver")
        .executeTakeFirst();
      return row !== undefined && BigInt(row.position) >= head;
    });
    await resolver.stop();
    resolver = null;
    expect(await answers(ip)).toHaveLength(1);
  });

  it("names many new sources at first sight, each once, leaving one named before as it was", async () => {
    const namedBefore = "192.0.2.98";
    await appendNxdomainAnswer(namedBefore);
    // More new sources than one statement appends (500); 198.51.100.7 was seen in the first report.
    const fresh = ["203.0.113", "198.51.100"]
      .flatMap((network) => Array.from({ length: 256 }, (_, host) => `${network}.${host}`))
      .filter((ip) => ip !== ips.publicSuffix);
    await appendAggregateReports(runtime.store, [
      aggregateReport({
        identity: "names-3",
        domain: "names.test.com",
        organization: "google.com",
        begin: day,
        end: day + 86_399,
        rows: [namedBefore, ...fresh].map((sourceIp) => ({
          sourceIp,
          count: 1,
          disposition: "none",
          policyDkim: "pass",
          policySpf: "pass",
        })),
      }),
    ]);
    const resolved: string[] = [];
    resolver = start({
      namer: lazySourceNamer(null),
      reverseDns: false,
      onResolved: (answer) => resolved.push(answer.ip),
    });
    await until("every new source named", async () => resolved.length >= fresh.length, 60_000);
    await resolver.stop();
    resolver = null;
    expect(resolved.sort()).toEqual([...fresh].sort());
    for (const ip of [fresh[0]!, fresh[300]!, fresh.at(-1)!]) {
      const [answer, ...more] = await answers(ip);
      expect(more).toEqual([]);
      expect(answer).toMatchObject({ ip, outcome: "not_asked" });
      // Documentation ranges: marked reserved, with no country.
      expect(answer!.naming).toMatchObject({ country: null });
    }
    expect((await answers(namedBefore)).map((answer) => answer.outcome)).toEqual(["nxdomain"]);
  });
});
