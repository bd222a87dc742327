import { catchUp } from "@dmarc-ledger/projection-engine";
import { createResolver } from "@dmarc-ledger/safe-spf";
import {
  type FixtureDnsServer,
  type FixtureZones,
  startFixtureDnsServer,
} from "@dmarc-ledger/safe-spf/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSafeSpfRefresher } from "../src/safe-spf-refresher.js";
import { seedComputedDomains } from "../src/testing/index.js";
import {
  eventually,
  openWorld,
  projections,
  type RefreshTestWorld,
  safeSpfEvents,
  seedDomains,
} from "./helpers.js";

const settings = { minRefreshMs: 1000, maxRefreshMs: 60_000 };

describe("1,000 domains that include one provider", () => {
  const ttl = 8;
  const zones: FixtureZones = {
    "_spf.shared.test": [{ TXT: "v=spf1 include:_net1.shared.test include:_net2.shared.test ~all", ttl }],
    "_net1.shared.test": [{ TXT: "v=spf1 ip4:192.0.2.0/24 ~all", ttl }],
    "_net2.shared.test": [{ TXT: "v=spf1 ip6:2001:db8::/32 ~all", ttl }],
  };
  // The resolver takes an answer with less than a second left as expired (resolver.ts), so an
  // answer serves ttl - 1 seconds: seeding that took 7.7 s of an 8 s TTL rightly asked twice.
  const cacheLifeMs = (ttl - 1) * 1000;
  let dns: FixtureDnsServer;
  let world: RefreshTestWorld;
  const domains = Array.from({ length: 1000 }, (_, i) => `d${i}.example.net`);

  beforeAll(async () => {
    dns = await startFixtureDnsServer(zones);
    world = await openWorld("dl_spf_share");
  });
  afterAll(async () => {
    await world?.close();
    await dns?.close();
  });

  it("cause one query per name per TTL, not one per domain", async () => {
    // One resolver for seeding and refreshing, as in `dmarc-ledger start`: each record is due when
    // the cached answer it was built from expires, so all 1,000 come due together.
    // The test counts queries: on a loaded machine an answer later than a 1 s timeout would be
    // asked again and counted twice. How the resolver meets a slow server is tested elsewhere.
    const resolver = createResolver({ nameservers: [dns.address], timeoutMs: 10_000 });
    const seededAt = Date.now();
    await seedComputedDomains(world.runtime.store, {
      tenantId: world.tenantId,
      resolver,
      domains: domains.map((domain) => ({ domain, original: "v=spf1 include:_spf.shared.test -all" })),
    });
    await catchUp({ store: world.runtime.store, db: world.runtime.db, projections });
    const seedingWindows = Math.floor((Date.now() - seededAt) / cacheLifeMs) + 1;
    const askedWhileSeeding = dns.queryLog.filter((q) => q.name === "_spf.shared.test").length;
    expect(askedWhileSeeding).toBeLessThanOrEqual(seedingWindows);

    const logStart = dns.queryLog.length;
    const refreshed = new Set<string>();
    let firstAt = 0;
    let lastAt = 0;
    const refresher = startSafeSpfRefresher({
      store: world.runtime.store,
      db: world.runtime.db,
      resolver,
      settings,
      tickMs: 200,
      onRefreshed: (domain, outcome) => {
        expect(outcome.kind).toBe("unchanged");
        firstAt ||= Date.now();
        lastAt = Date.now();
        refreshed.add(domain);
      },
    });
    try {
      await eventually("every domain refreshed once", async () => refreshed.size === domains.length, 90_000);
    } finally {
      await refresher.stop();
    }
    const asked = dns.queryLog.slice(logStart);
    const windows = Math.floor((lastAt - firstAt) / cacheLifeMs) + 1;
    for (const name of ["_spf.shared.test", "_net1.shared.test", "_net2.shared.test"]) {
      const count = asked.filter((q) => q.name === name && q.type === "TXT").length;
      expect(count, name).toBeGreaterThanOrEqual(1);
      expect(count, name).toBeLessThanOrEqual(windows);
    }
    // Nothing was asked per domain either (the originals are given, not looked up).
    expect(new Set(asked.map((q) => q.name)).size).toBeLessThanOrEqual(3);
  });
});

describe("refreshers that restart, or run side by side", () => {
  const ttl = 2;
  const zonesWith = (network: string): FixtureZones => ({
    "_spf.restart.test": [{ TXT: `v=spf1 ip4:${network} ~all`, ttl }],
  });
  let dns: FixtureDnsServer;
  let world: RefreshTestWorld;
  const domains = Array.from({ length: 40 }, (_, i) => `r${i}.example.org`);

  beforeAll(async () => {
    dns = await startFixtureDnsServer(zonesWith("192.0.2.0/24"), { delayMs: 5 });
    world = await openWorld("dl_spf_restart");
    const resolver = createResolver({ nameservers: [dns.address], timeoutMs: 1000 });
    await seedDomains(
      world,
      resolver,
      domains.map((domain) => ({ domain, original: "v=spf1 include:_spf.restart.test -all" })),
    );
  });
  afterAll(async () => {
    await world?.close();
    await dns?.close();
  });

  const computedCount = async (domain: string) =>
    (await safeSpfEvents(world, domain)).filter((e) => e.type === "SafeSpfRecordComputed").length;
  const start = (owner: string, onRefreshed?: () => void) =>
    startSafeSpfRefresher({
      store: world.runtime.store,
      db: world.runtime.db,
      resolver: createResolver({ nameservers: [dns.address], timeoutMs: 1000 }),
      settings,
      owner,
      tickMs: 100,
      batchSize: 5,
      concurrency: 1,
      ...(onRefreshed ? { onRefreshed } : {}),
    });

  it("lose no schedule when stopped in the middle of a round, nor when the schedule's rows are gone", async () => {
    dns.setZones(zonesWith("198.51.100.0/24"));
    let done = 0;
    let stopping: Promise<void> | undefined;
    const first = start("first", () => {
      if (++done === 10) stopping = first.stop();
    });
    await eventually("the first refresher stopped mid-round", async () => stopping !== undefined, 60_000);
    await stopping;
    const changedByFirst = (await Promise.all(domains.map(computedCount))).filter((n) => n === 2).length;
    expect(changedByFirst).toBeGreaterThanOrEqual(10);
    expect(changedByFirst).toBeLessThan(domains.length);

    // A new process: the due domains are still due, and those done are not done again.
    const second = start("second");
    try {
      await eventually("every domain changed once", async () =>
        (await Promise.all(domains.map(computedCount))).every((n) => n === 2),
      );
      // The schedule's table lost (a restored backup, a dropped table): derived from the events again.
      await sql`delete from safe_spf_refresh`.execute(world.runtime.db);
      await eventually("the schedule derived again", async () => {
        const rows = await world.runtime.db
          .selectFrom("safe_spf_refresh")
          .select(["domain", "next_due", "last_checked"])
          .execute();
        return rows.length === domains.length ? rows : false;
      });
    } finally {
      await second.stop();
    }
    for (const domain of domains) expect(await computedCount(domain), domain).toBe(2);
  });

  it("running side by side, append each change once", async () => {
    dns.setZones(zonesWith("203.0.113.0/24"));
    const refreshers = [start("left"), start("right")];
    try {
      await eventually(
        "every domain changed again",
        async () => (await Promise.all(domains.map(computedCount))).every((n) => n >= 3),
        60_000,
      );
      // Another TTL and more: a duplicate, if any, would have shown by now.
      await new Promise((resolve) => setTimeout(resolve, ttl * 1000 + 500));
    } finally {
      await Promise.all(refreshers.map((refresher) => refresher.stop()));
    }
    for (const domain of domains) expect(await computedCount(domain), domain).toBe(3);
  });
});
