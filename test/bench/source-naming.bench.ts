/**
 * Naming report sources without DNS: what the shipped map and databases add to the resident set
 * (against docs/limits.md's figures), what naming one new address costs in the namer (against
 * the AS lookup alone, measured in the same run), and what a new address costs end to end at
 * first sight, on PGlite: the resolver naming a report's new addresses (reverse DNS off) against
 * appending the same number of answers directly.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { newEvent, type SourceIpResolved, streams } from "@dmarc-ledger/events";
import { openRuntime } from "@dmarc-ledger/runtime";
import { createResolver } from "@dmarc-ledger/safe-spf";
import { openNetworkDatabases } from "../../packages/source-names/src/network-databases.js";
import { serviceMap } from "../../packages/source-names/src/service-map.js";
import { startSourceIpResolver } from "../../packages/source-names/src/source-ip-resolver.js";
import { lazySourceNamer, sourceNamer } from "../../packages/source-names/src/source-namer.js";

const gc = (globalThis as { gc?: () => void }).gc;
const mib = (bytes: number) => bytes / 1024 / 1024;
const settledRss = () => {
  for (let i = 0; i < 3; i++) gc?.();
  return process.memoryUsage().rss;
};

/** Deterministic public IPv4 addresses (a linear congruential walk), none in 0/8, 10/8, 127/8 or 224/3. */
function addresses(count: number, seed: number): string[] {
  const found: string[] = [];
  let x = seed >>> 0;
  while (found.length < count) {
    x = (Math.imul(x, 1_664_525) + 1_013_904_223) >>> 0;
    const a = x >>> 24;
    if (a === 0 || a === 10 || a === 127 || a >= 224) continue;
    found.push(`${a}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`);
  }
  return found;
}

// 1. Resident memory.
const before = settledRss();
const services = serviceMap();
const networks = await openNetworkDatabases();
const namer = sourceNamer(services, networks);
namer.name("209.85.220.41", { name: null, confirmed: false });
const added = mib(settledRss() - before);
// docs/limits.md: the map 10 MiB, the databases 48 to 57 MiB.
const documented = 10 + 57;
console.log(
  `resident set added by the map and databases: ${added.toFixed(1)} MiB (${(added / documented).toFixed(2)}× the ${documented} MiB docs/limits.md gives)`,
);

// 2. The namer, per new address.
const ips = addresses(50_000, 41);
const evidence = new Map([
  ["example.com", 10],
  ["amazonses.com", 7],
]);
let started = performance.now();
for (const ip of ips) networks.asnOf(ip);
const asnOnly = ((performance.now() - started) * 1000) / ips.length;
started = performance.now();
for (const ip of ips) namer.name(ip, { name: null, confirmed: false }, evidence);
const naming = ((performance.now() - started) * 1000) / ips.length;
console.log(
  `naming one new address: ${naming.toFixed(1)} µs (AS, country, range, evidence, AS service); the AS lookup alone ${asnOnly.toFixed(1)} µs: ${(naming / asnOnly).toFixed(1)}×`,
);

// 3. End to end at first sight, on PGlite.
const NEW = 1_000;
const dataDir = mkdtempSync(join(tmpdir(), "dl-bench-naming-"));
const runtime = await openRuntime({ DMARC_LEDGER_DATA_DIR: dataDir });
try {
  const direct = addresses(NEW, 7);
  started = performance.now();
  const resolvedAt = new Date().toISOString();
  for (let offset = 0; offset < direct.length; offset += 16)
    await Promise.all(
      direct.slice(offset, offset + 16).map((ip) =>
        runtime.store.append(
          streams.sourceIp(ip),
          [
            newEvent(
              "SourceIpResolved",
              {
                ip,
                outcome: "not_asked",
                ptrNames: [],
                name: null,
                confirmed: false,
                resolvedAt,
                naming: null,
              },
              { causedBy: "bench" },
            ),
          ],
          "no_stream",
        ),
      ),
    );
  const appendOnly = ((performance.now() - started) * 1000) / NEW;

  const fresh = addresses(NEW, 99);
  let named = 0;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  // Opened before the clock starts: a running service opens them once, not per report.
  const warmNamer = lazySourceNamer(null);
  await warmNamer.ready();
  const resolver = startSourceIpResolver({
    store: runtime.store,
    db: runtime.db,
    resolver: createResolver({ nameservers: ["127.0.0.1:9"], timeoutMs: 50 }),
    namer: warmNamer,
    reverseDns: false,
    ratePerSecond: 20,
    concurrency: 8,
    refreshAgeSeconds: 7 * 86_400,
    retryAgeSeconds: 3_600,
    onResolved: (answer: SourceIpResolved) => {
      if (answer.outcome === "not_asked" && ++named === NEW) done();
    },
    onError: (error) => console.error(error),
  });
  started = performance.now();
  await runtime.store.append(
    streams.aggregateReport("bench-naming"),
    [
      newEvent(
        "AggregateReportReceived",
        {
          identity: "bench-naming",
          schema: "1.0",
          orgName: "bench",
          organization: "bench",
          email: "bench@bench.test",
          reportId: "bench-naming",
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
          rows: fresh.map((sourceIp) => ({
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
            dkim: [{ domain: "amazonses.com", selector: null, result: "pass", humanResult: null }],
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
  const firstSight = ((performance.now() - started) * 1000) / NEW;
  await resolver.stop();
  console.log(
    `PGlite, a report's ${NEW} new addresses named at first sight: ${(firstSight / 1000).toFixed(2)} ms each; appending as many answers directly ${(appendOnly / 1000).toFixed(2)} ms: ${(firstSight / appendOnly).toFixed(2)}×`,
  );
} finally {
  await runtime.close();
  rmSync(dataDir, { recursive: true, force: true });
}
