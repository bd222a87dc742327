import { Resolver } from "node:dns/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDnsServer } from "../src/dns-server.js";
import { dig } from "./support/dig.js";
import { chainedSet, type Harness, openHarness, waitFor, zoneName } from "./support/harness.js";

const domain = "switch.example";
const root = `${domain}.${zoneName}`;
const terms = (second: number) =>
  Array.from({ length: 3 }, (_, record) =>
    Array.from({ length: 4 }, (_, index) => `ip4:10.${second}.${record}.${index}`),
  );
const setA = chainedSet(domain, "aaaaaaaa", terms(1));
const setB = chainedSet(domain, "bbbbbbbb", terms(2));

/** Follows a published chain the way an SPF evaluator does: root, then each redirect=. */
async function walkChain(resolver: Resolver, pauseMs: () => number, from = root): Promise<string[]> {
  const seen: string[] = [];
  let name: string | null = from;
  for (let hop = 0; name && hop < 10; hop++) {
    const value: string = (await resolver.resolveTxt(name)).map((chunks) => chunks.join(""))[0]!;
    seen.push(...value.split(" ").filter((term) => term.startsWith("ip4:")));
    name = /redirect=(\S+)/.exec(value)?.[1] ?? null;
    await new Promise((resolve) => setTimeout(resolve, pauseMs()));
  }
  return seen;
}

const allTerms = (set: { value: string }[]) =>
  set.flatMap((record) => record.value.split(" ").filter((term) => term.startsWith("ip4:")));

describe("apps/dns: switching a domain to a new record set", () => {
  let harness: Harness;
  let server: RunningDnsServer;
  let resolver: Resolver;

  beforeAll(async () => {
    harness = await openHarness("dl_dns_switch");
    await harness.publish(domain, setA);
    // A TTL of 1 s: the old set is kept 1 s per chained record after a switch.
    server = await harness.startServer({ recordTtl: 1 });
    resolver = new Resolver({ timeout: 2000, tries: 2 });
    resolver.setServers([`127.0.0.1:${server.ports.udp}`]);
  });
  afterAll(() => harness?.close());

  it("a resolver following the chain during switches sees one whole set, never a mix", async () => {
    const expectedA = allTerms(setA).join(" ");
    const expectedB = allTerms(setB).join(" ");
    let switching = true;
    const walks: string[] = [];
    const walker = async () => {
      while (switching) walks.push((await walkChain(resolver, () => Math.random() * 40)).join(" "));
    };
    const walkers = [walker(), walker(), walker()];
    for (const next of [setB, setA, setB, setA]) {
      await harness.publish(domain, next);
      await waitFor(
        async () => (await dig(server.ports.udp, root, "TXT")).text.includes(next[0]!.value),
        "the switch",
      );
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    switching = false;
    await Promise.all(walkers);
    expect(walks.length).toBeGreaterThan(10);
    const mixed = walks.filter((walk) => walk !== expectedA && walk !== expectedB);
    expect(mixed).toEqual([]);
    expect(walks).toContain(expectedA);
    expect(walks).toContain(expectedB);
  });

  it("keeps the old set's chained records for a resolver that read the old root, then retires them", async () => {
    // TTL 3 s, two chained records: the old ones are served for 6 s after a switch.
    const slow = await harness.startServer({ recordTtl: 3 });
    const port = slow.ports.udp;
    const slowResolver = new Resolver({ timeout: 2000, tries: 2 });
    slowResolver.setServers([`127.0.0.1:${port}`]);
    await harness.publish(domain, setA);
    await waitFor(async () => (await dig(port, root, "TXT")).text.includes(setA[0]!.value), "set A");
    const oldRoot = (await slowResolver.resolveTxt(root))[0]!.join("");
    const firstChained = /redirect=(\S+)/.exec(oldRoot)![1]!;

    await harness.publish(domain, setB);
    const switched = Date.now();
    await waitFor(async () => (await dig(port, root, "TXT")).text.includes(setB[0]!.value), "set B");
    // Well after the switch (and past the once-a-second sweep), the rest of the old chain is
    // still the old set, whole.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const rest = await walkChain(slowResolver, () => 0, firstChained);
    expect(Date.now() - switched).toBeLessThan(6000);
    expect([...allTerms([setA[0]!]), ...rest]).toEqual(allTerms(setA));
    await waitFor(
      async () => (await dig(port, firstChained, "TXT")).status === "NXDOMAIN",
      "the old set to be retired",
    );
    expect(Date.now() - switched).toBeGreaterThanOrEqual(5000);
    expect((await dig(port, setA[2]!.name, "TXT")).status).toBe("NXDOMAIN");
    expect((await walkChain(slowResolver, () => 0)).join(" ")).toBe(allTerms(setB).join(" "));
  });

  it("a replica started after the switch serves the same records, and retires from the events' time", async () => {
    const replica = await harness.startServer({ recordTtl: 1 });
    const replicaResolver = new Resolver({ timeout: 2000, tries: 2 });
    replicaResolver.setServers([`127.0.0.1:${replica.ports.udp}`]);
    expect((await walkChain(replicaResolver, () => 0)).join(" ")).toBe(allTerms(setB).join(" "));
    // Set A's chained records were retired by the events' time, before this replica started.
    expect((await dig(replica.ports.udp, setA[1]!.name, "TXT")).status).toBe("NXDOMAIN");
  });
});
