import { catchUp } from "@dmarc-ledger/projection-engine";
import { createResolver } from "@dmarc-ledger/safe-spf";
import {
  type FixtureDnsServer,
  type FixtureZones,
  startFixtureDnsServer,
} from "@dmarc-ledger/safe-spf/testing";
import { domainHistory } from "@dmarc-ledger/tenancy";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RefreshOutcome } from "../src/refresh-safe-spf.js";
import { type RunningSafeSpfRefresher, startSafeSpfRefresher } from "../src/safe-spf-refresher.js";
import { safeSpfState } from "../src/safe-spf-state.js";
import {
  eventually,
  openWorld,
  projections,
  type RefreshTestWorld,
  safeSpfEvents,
  seedDomains,
} from "./helpers.js";

const ttl = 3;
const healthy: FixtureZones = {
  "_spf.moving.test": [{ TXT: "v=spf1 ip4:192.0.2.0/24 ip4:203.0.113.0/25 ~all", ttl }],
  "_spf.timeout.test": [{ TXT: "v=spf1 ip4:198.51.100.0/26 ~all", ttl }],
  "_spf.servfail.test": [{ TXT: "v=spf1 ip4:198.51.100.64/26 ~all", ttl }],
  "_spf.limit.test": [{ TXT: "v=spf1 ip4:198.51.100.128/26 ~all", ttl }],
};
const original = (provider: string) => `v=spf1 include:_spf.${provider}.test -all`;
const exists = Array.from({ length: 11 }, (_, i) => `exists:%{i}.e${i}.limit.test`).join(" ");

describe("the Safe SPF refresher against a real DNS server", () => {
  let dns: FixtureDnsServer;
  let world: RefreshTestWorld;
  let refresher: RunningSafeSpfRefresher;
  const outcomes: { domain: string; outcome: RefreshOutcome; at: number }[] = [];
  const errors: unknown[] = [];

  beforeAll(async () => {
    dns = await startFixtureDnsServer(healthy);
    world = await openWorld("dl_spf_refresh");
    const resolver = createResolver({ nameservers: [dns.address], timeoutMs: 200, retries: 1 });
    await seedDomains(
      world,
      resolver,
      ["moving", "timeout", "servfail", "limit"].map((provider) => ({
        domain: `${provider}.example.com`,
        original: original(provider),
      })),
    );
    refresher = startSafeSpfRefresher({
      store: world.runtime.store,
      db: world.runtime.db,
      resolver,
      settings: { minRefreshMs: 1000, maxRefreshMs: 60_000 },
      tickMs: 100,
      retryBaseMs: 300,
      onError: (error) => errors.push(error),
      onRefreshed: (domain, outcome) => outcomes.push({ domain, outcome, at: Date.now() }),
    });
  });

  afterAll(async () => {
    await refresher?.stop();
    await world?.close();
    await dns?.close();
  });

  const stateOf = (domain: string) => safeSpfState(world.runtime.db, world.tenantId, domain);

  it("appends nothing for an unchanged result but shows when it was last checked", async () => {
    const before = await safeSpfEvents(world, "moving.example.com");
    await eventually("an unchanged refresh", async () =>
      outcomes.some((o) => o.domain === "moving.example.com" && o.outcome.kind === "unchanged"),
    );
    expect(await safeSpfEvents(world, "moving.example.com")).toHaveLength(before.length);
    const state = (await stateOf("moving.example.com"))!;
    expect(state.lastChecked! > state.lastComputed!).toBe(true);
    expect(state.freshness).toEqual({ state: "current" });
    expect(state.nextCheck! > state.lastChecked!).toBe(true);
  });

  it("changes the record within one TTL of the provider's change, and history shows the diff", async () => {
    const changedAt = Date.now();
    dns.setZones({
      ...healthy,
      "_spf.moving.test": [{ TXT: "v=spf1 ip4:192.0.2.0/24 ip4:198.51.100.0/24 ~all", ttl }],
    });
    const events = await eventually("the changed record", async () => {
      const found = await safeSpfEvents(world, "moving.example.com");
      return found.length === 2 ? found : false;
    });
    const changed = events[1]!;
    expect(changed.type).toBe("SafeSpfRecordComputed");
    expect(changed.metadata.causedBy).toBe("process:safe-spf-refresh");
    expect(changed.data).toMatchObject({ added: ["198.51.100.0/24"], removed: ["203.0.113.0/25"] });
    // The cache, the schedule and the refresher's tick each add a little to the TTL, never a TTL.
    expect(changed.recordedAt.getTime() - changedAt).toBeLessThan(ttl * 1000 + 1500);

    await catchUp({ store: world.runtime.store, db: world.runtime.db, projections });
    const history = (await domainHistory(world.runtime.db, world.tenantId, "moving.example.com"))!;
    const description = history.at(-1)!.Description;
    expect(description).toContain("added 198.51.100.0/24");
    expect(description).toContain("removed 203.0.113.0/25");
    expect(description).toContain("lookups of the original 1; of the published set 0");
    const state = (await stateOf("moving.example.com"))!;
    expect(state.records[0]!.value).toContain("ip4:198.51.100.0/24");
  });

  it("keeps serving the last good record through a timeout, a SERVFAIL and a provider past 10 lookups, telling each failure once", async () => {
    const good = new Map<string, unknown>();
    for (const provider of ["timeout", "servfail", "limit"])
      good.set(provider, (await stateOf(`${provider}.example.com`))!.records);
    dns.setZones({
      ...healthy,
      "_spf.moving.test": [{ TXT: "v=spf1 ip4:192.0.2.0/24 ip4:198.51.100.0/24 ~all", ttl }],
      "_spf.timeout.test": ["TIMEOUT"],
      "_spf.servfail.test": ["SERVFAIL"],
      "_spf.limit.test": [{ TXT: `v=spf1 ip4:198.51.100.128/26 ${exists} ~all`, ttl }],
    });
    const expectedCodes = { timeout: "dns_timeout", servfail: "unflattenable", limit: "lookup_limit" };
    for (const [provider, code] of Object.entries(expectedCodes)) {
      const domain = `${provider}.example.com`;
      // Three tries in a row failed (backoff 300, 600, 1200 ms): retried, told once.
      await eventually(`three failed refreshes of ${domain}`, async () => {
        const failed = outcomes.filter((o) => o.domain === domain && o.outcome.kind === "failed");
        return failed.length >= 3 ? failed : false;
      });
      const failures = (await safeSpfEvents(world, domain)).filter(
        (e) => e.type === "SafeSpfComputationFailed",
      );
      expect(failures, domain).toHaveLength(1);
      expect(failures[0]!.data).toMatchObject({ code });
    }
    await catchUp({ store: world.runtime.store, db: world.runtime.db, projections });
    for (const provider of Object.keys(expectedCodes)) {
      const state = (await stateOf(`${provider}.example.com`))!;
      expect(state.records, provider).toEqual(good.get(provider));
      expect(state.freshness?.state, provider).toBe("failing");
      if (state.freshness?.state === "failing") {
        expect(state.freshness.reason).toContain(expectedCodes[provider as keyof typeof expectedCodes]);
      }
    }
    const timeoutTries = outcomes
      .filter((o) => o.domain === "timeout.example.com" && o.outcome.kind === "failed")
      .map((o) => o.at);
    const gaps = timeoutTries.slice(1).map((at, index) => at - timeoutTries[index]!);
    // Exponential backoff: each wait is longer than the one before.
    expect(gaps[1]!).toBeGreaterThan(gaps[0]!);
  });

  it("recovers without an event when the provider answers as before", async () => {
    const before = await safeSpfEvents(world, "servfail.example.com");
    dns.setZones({
      ...healthy,
      "_spf.moving.test": [{ TXT: "v=spf1 ip4:192.0.2.0/24 ip4:198.51.100.0/24 ~all", ttl }],
    });
    await eventually("the servfail domain checked again", async () => {
      const state = await stateOf("servfail.example.com");
      return state?.freshness?.state === "current" ? state : false;
    });
    expect(await safeSpfEvents(world, "servfail.example.com")).toHaveLength(before.length);
    expect(errors).toEqual([]);
  });

  it("shows a record whose answers expired without a check since as stale", async () => {
    // As a refresher that stopped (or fell behind) leaves it: due and expired two minutes ago.
    await sql`update safe_spf_refresh set valid_until = now() - interval '2 minutes',
      next_due = now() + interval '1 hour' where domain = 'moving.example.com'`.execute(world.runtime.db);
    const state = (await stateOf("moving.example.com"))!;
    expect(state.freshness?.state).toBe("stale");
    if (state.freshness?.state === "stale") expect(state.freshness.since < state.nextCheck!).toBe(true);
  });
});
