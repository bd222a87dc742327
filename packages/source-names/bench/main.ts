/**
 * The source-IP resolver, whole (event store, read model, queue, DNS over loopback): 100 report
 * sources served by a DNS server that delays every answer by 50 ms (an uncached PTR through a
 * recursive resolver), on PGlite and on PostgreSQL. Concurrency 1 is the baseline (two round trips
 * and one append per IP); the other runs print their speed-up over it, and a run with a rate limit
 * shows the limit holds (its IPs per second should be at most the rate). With enough concurrency
 * the event store's appends (one stream per IP) become the limit.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createTestDatabase } from "@dmarc-ledger/db/testing";
import { newEvent, streams } from "@dmarc-ledger/events";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { createResolver } from "@dmarc-ledger/safe-spf";
import { type FixtureZones, startFixtureDnsServer } from "@dmarc-ledger/safe-spf/testing";
import { reverseName } from "../src/reverse-name.js";
import { startSourceIpResolver } from "../src/source-ip-resolver.js";

const IPS = 100;
const DELAY_MS = 50;

const ipsOf = (run: number) => Array.from({ length: IPS }, (_, i) => `198.18.${run}.${i}`);

function zonesFor(runs: number): FixtureZones {
  const zones: FixtureZones = {};
  for (let run = 0; run < runs; run++) {
    for (const ip of ipsOf(run)) {
      const name = `host-${ip.replaceAll(".", "-")}.bench.test`;
      zones[reverseName(ip)] = [{ PTR: name }];
      zones[name] = [{ A: ip }];
    }
  }
  return zones;
}

const runs = [
  { label: "concurrency 1 (baseline)", concurrency: 1, rate: 10_000 },
  { label: "concurrency 8", concurrency: 8, rate: 10_000 },
  { label: "concurrency 32", concurrency: 32, rate: 10_000 },
  { label: "concurrency 32, rate 5/s", concurrency: 32, rate: 5 },
];

const dns = await startFixtureDnsServer(zonesFor(2 * runs.length), { delayMs: DELAY_MS });

async function bench(backend: string, runtime: Runtime, firstRun: number): Promise<void> {
  console.log(`${backend}:`);
  let baseline = 0;
  for (const [offset, run] of runs.entries()) {
    const index = firstRun + offset;
    const ips = ipsOf(index);
    let answered = 0;
    let confirmed = 0;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    const started = performance.now();
    const resolver = startSourceIpResolver({
      store: runtime.store,
      db: runtime.db,
      resolver: createResolver({ nameservers: [dns.address], timeoutMs: 2000 }),
      ratePerSecond: run.rate,
      concurrency: run.concurrency,
      refreshAgeSeconds: 7 * 86_400,
      retryAgeSeconds: 3_600,
      onResolved: (answer) => {
        answered++;
        if (answer.confirmed) confirmed++;
        if (answered === ips.length) done();
      },
      onError: (error) => console.error(error),
    });
    await runtime.store.append(
      streams.aggregateReport(`bench-${index}`),
      [
        newEvent(
          "AggregateReportReceived",
          {
            identity: `bench-${index}`,
            schema: "1.0",
            orgName: "bench",
            organization: "bench",
            email: "bench@bench.test",
            reportId: `bench-${index}`,
            begin: 1_700_000_000,
            end: 1_700_086_399,
            policy: {
              domain: "bench.test",
              adkim: null,
              aspf: null,
              p: "none",
              sp: null,
              np: null,
              pct: null,
              fo: null,
              testing: null,
              discoveryMethod: null,
            },
            rows: ips.map((sourceIp) => ({
              sourceIp,
              count: 1,
              disposition: "none",
              policyDkim: "pass",
              policySpf: "pass",
              reasons: [],
              arc: null,
              headerFrom: "bench.test",
              envelopeFrom: null,
              envelopeTo: null,
              dkim: [],
              spf: [],
            })),
            chunk: { index: 0, last: true },
            source: "bench",
            warnings: [],
          },
          { causedBy: "bench" },
        ),
      ],
      "no_stream",
    );
    await finished;
    const seconds = (performance.now() - started) / 1000;
    await resolver.stop();
    const perSecond = ips.length / seconds;
    if (offset === 0) baseline = perSecond;
    console.log(
      `  ${run.label.padEnd(28)} ${ips.length} IPs (${confirmed} confirmed) in ${seconds.toFixed(2)} s: ` +
        `${perSecond.toFixed(0)} IPs/s, ${(perSecond / baseline).toFixed(1)}× the baseline`,
    );
  }
}

try {
  const dataDir = mkdtempSync(join(tmpdir(), "dl-bench-names-"));
  const embedded = await openRuntime({ DMARC_LEDGER_DATA_DIR: dataDir });
  try {
    await bench("PGlite", embedded, 0);
  } finally {
    await embedded.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const database = await createTestDatabase("dl_bench_names");
  const server = await openRuntime({ DATABASE_URL: database.url });
  try {
    await bench("PostgreSQL", server, runs.length);
  } finally {
    await server.close();
    await database.drop();
  }
} finally {
  await dns.close();
}
