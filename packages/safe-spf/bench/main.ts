/**
 * Flattens a 40-include tree served by a real DNS server that delays every answer by 20 ms, and
 * compares the wall time with the critical path (tree depth × 20 ms): resolving siblings in parallel
 * and sharing in-flight queries is what brings it close to 1×.
 */

import { fork } from "node:child_process";
import { once } from "node:events";
import { performance } from "node:perf_hooks";
import { createResolver, flattenSpf } from "../src/index.js";
import type { FixtureQuery, FixtureZones } from "../src/testing/index.js";

const DELAY_MS = 20;
const TARGET_RATIO = 1.3;
const RUNS = 5;

/** root → 8 includes → 4 includes each (40 includes); leaves name hosts, some shared by several leaves. */
function benchZones(): { zones: FixtureZones; includes: number; depth: number } {
  const zones: FixtureZones = {};
  const level1: string[] = [];
  let includes = 0;
  for (let i = 0; i < 8; i++) {
    const level2: string[] = [];
    for (let j = 0; j < 4; j++) {
      const leaf = i * 4 + j;
      const name = `l2-${leaf}.bench.test`;
      zones[name] = [
        {
          TXT: `v=spf1 ip4:198.18.${leaf}.0/26 ip4:198.18.${leaf}.128/27 ip6:2001:db8:${leaf.toString(16)}::/48 a:host-${leaf % 6}.bench.test ~all`,
        },
      ];
      level2.push(`include:${name}`);
      includes++;
    }
    const name = `l1-${i}.bench.test`;
    zones[name] = [{ TXT: `v=spf1 ${level2.join(" ")} -all` }];
    level1.push(`include:${name}`);
    includes++;
  }
  zones["bench.test"] = [{ TXT: `v=spf1 ${level1.join(" ")} -all` }];
  for (let h = 0; h < 6; h++)
    zones[`host-${h}.bench.test`] = [{ A: `198.19.0.${h + 1}` }, { AAAA: `2001:db8:ff::${h + 1}` }];
  // Sequential answers on the longest path: root TXT, level-1 TXT, level-2 TXT, host A/AAAA.
  return { zones, includes, depth: 4 };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main() {
  const { zones, includes, depth } = benchZones();
  const server = fork(new URL("./dns-server-process.ts", import.meta.url), { execArgv: ["--import", "tsx"] });
  server.send({ zones, delayMs: DELAY_MS });
  const [{ address }] = (await once(server, "message")) as [{ address: string }];
  const queryLog = async (): Promise<FixtureQuery[]> => {
    server.send("queries");
    return ((await once(server, "message")) as [{ queryLog: FixtureQuery[] }])[0].queryLog;
  };
  try {
    const times: number[] = [];
    let queries = 0;
    let distinct = 0;
    let result: Awaited<ReturnType<typeof flattenSpf>> | undefined;
    // One unmeasured run warms the JIT (and the fixture server's encoded answers).
    for (let run = -1; run < RUNS; run++) {
      const before = (await queryLog()).length;
      const resolver = createResolver({ nameservers: [address], timeoutMs: 2000 });
      const start = performance.now();
      result = await flattenSpf({ domain: "bench.test", resolver, publishZone: "spf.bench.test" });
      if (run >= 0) times.push(performance.now() - start);
      const log = (await queryLog()).slice(before);
      queries = log.length;
      distinct = new Set(log.map((entry) => `${entry.type} ${entry.name}`)).size;
    }
    // One question's round trip through this machine's UDP stack, dns2 encoding/parsing and timers.
    const roundTrips: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const resolver = createResolver({ nameservers: [address] });
      const start = performance.now();
      await resolver.lookup("bench.test", "TXT");
      roundTrips.push(performance.now() - start);
    }
    const roundTrip = median(roundTrips);
    const criticalPath = depth * DELAY_MS;
    const wall = median(times);
    const ratio = wall / criticalPath;
    console.log(`tree: ${includes} includes, depth ${depth}, answers delayed ${DELAY_MS} ms`);
    console.log(
      `queries sent: ${queries} (${distinct} distinct names/types${queries === distinct ? ", each once" : ", SOME REPEATED"})`,
    );
    console.log(
      `published: ${result!.records.length} records, lookups ${result!.lookupsBefore} → ${result!.lookupsAfter}`,
    );
    console.log(
      `wall time: median ${wall.toFixed(1)} ms of ${RUNS} runs (${times.map((t) => t.toFixed(0)).join(", ")})`,
    );
    console.log(`critical path: ${criticalPath} ms; ratio ${ratio.toFixed(2)}× (target ≤ ${TARGET_RATIO}×)`);
    console.log(
      `one query round trip: ${roundTrip.toFixed(1)} ms; depth × round trip = ${(depth * roundTrip).toFixed(1)} ms (ratio to it ${(wall / (depth * roundTrip)).toFixed(2)}×)`,
    );
    console.log(ratio <= TARGET_RATIO && queries === distinct ? "target met" : "target MISSED");
  } finally {
    server.send("close");
    await once(server, "exit");
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
