/**
 * Issue #12, "Safe SPF kept current": the re-resolution of BENCH_DOMAINS domains (default 10,000)
 * whose originals include 2 of 20 provider trees (4 names each), served by a real DNS server in
 * its own process that delays every answer by 20 ms. The refresher recomputes every domain
 * through one shared resolver (TTL cache and in-flight sharing); the baseline, measured in the
 * same run on a sample of BENCH_SAMPLE domains and scaled, does the same work with a resolver of
 * its own per domain, as a per-domain resolution would. Figures: queries sent against distinct
 * names, wall time, and both as ratios to the baseline. Needs the test PostgreSQL server; the
 * seeding of 10,000 domains takes minutes (`BENCH_DOMAINS=1000 pnpm bench dns-refresh` is quick).
 */
import { fork } from "node:child_process";
import { once } from "node:events";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { createTestDatabase } from "@dmarc-ledger/db/testing";
import { catchUp } from "@dmarc-ledger/projection-engine";
import { openRuntime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { createResolver } from "@dmarc-ledger/safe-spf";
import type { FixtureQuery, FixtureZones } from "@dmarc-ledger/safe-spf/testing";
import { refreshSafeSpf, startSafeSpfRefresher } from "@dmarc-ledger/safe-spf-service";
import { seedComputedDomains } from "@dmarc-ledger/safe-spf-service/testing";
import { createTenant } from "@dmarc-ledger/tenancy";
import { sql } from "kysely";

const DOMAINS = Number(process.env.BENCH_DOMAINS ?? 10_000);
const SAMPLE = Math.min(DOMAINS, Number(process.env.BENCH_SAMPLE ?? 300));
const PROVIDERS = 20;
const DELAY_MS = 20;
const CONCURRENCY = 50;

const log = (line: string) => console.log(line);
const progress = (line: string) => process.stderr.write(`  … ${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Provider p: a root record including three netblock records, v4 and v6. */
function providerZones(): FixtureZones {
  const zones: FixtureZones = {};
  for (let p = 0; p < PROVIDERS; p++) {
    const blocks = [1, 2, 3].map((n) => `_nb${n}.p${p}.bench.test`);
    zones[`_spf.p${p}.bench.test`] = [{ TXT: `v=spf1 ${blocks.map((b) => `include:${b}`).join(" ")} ~all` }];
    zones[blocks[0]!] = [{ TXT: `v=spf1 ip4:10.${p}.0.0/20 ip4:10.${p}.64.0/19 ~all` }];
    zones[blocks[1]!] = [{ TXT: `v=spf1 ip6:2001:db8:${p.toString(16)}::/48 ~all` }];
    zones[blocks[2]!] = [{ TXT: `v=spf1 ip4:172.16.${p}.0/24 ip4:172.17.${p}.0/25 ~all` }];
  }
  return zones;
}

const domainName = (i: number) => `d${i}.bench.example`;
const originalOf = (i: number) =>
  `v=spf1 ip4:192.0.2.${i % 250} include:_spf.p${i % PROVIDERS}.bench.test include:_spf.p${(i * 7 + 3) % PROVIDERS}.bench.test -all`;

async function main() {
  const server = fork(
    fileURLToPath(new URL("../../packages/safe-spf/bench/dns-server-process.ts", import.meta.url)),
    {
      execArgv: ["--import", "tsx"],
    },
  );
  server.send({ zones: providerZones(), delayMs: DELAY_MS });
  const [{ address }] = (await once(server, "message")) as [{ address: string }];
  const queryLog = async (): Promise<FixtureQuery[]> => {
    server.send("queries");
    return ((await once(server, "message")) as [{ queryLog: FixtureQuery[] }])[0].queryLog;
  };
  const database = await createTestDatabase("dl_bench_dns_refresh");
  const runtime = await openRuntime({ DATABASE_URL: database.url }, { eventStoreUrl: null });
  try {
    const { store, db } = runtime;
    const { tenantId } = await createTenant(
      store,
      { name: "bench", region: "global" },
      { causedBy: "bench" },
    );
    const seedStart = performance.now();
    await seedComputedDomains(store, {
      tenantId,
      resolver: createResolver({ nameservers: [address] }),
      domains: Array.from({ length: DOMAINS }, (_, i) => ({
        domain: domainName(i),
        original: originalOf(i),
      })),
      parallel: 40,
    });
    await catchUp({ store, db, projections: allProjections });
    progress(`seeded ${DOMAINS} domains with records in ${seconds(performance.now() - seedStart)}`);

    // Baseline: a sample re-resolved the same way (event stream, flattening, comparison), each
    // domain with a resolver of its own, CONCURRENCY at a time.
    const baselineFrom = (await queryLog()).length;
    const baselineStart = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < SAMPLE) {
          const domain = domainName(next++);
          const outcome = await refreshSafeSpf(store, domain, {
            resolver: createResolver({ nameservers: [address] }),
            metadata: { causedBy: "bench" },
            knownFailure: null,
            lastChecked: null,
          });
          if (outcome.kind !== "unchanged") throw new Error(`baseline ${domain}: ${outcome.kind}`);
        }
      }),
    );
    const baselineMs = performance.now() - baselineStart;
    const baselineQueries = (await queryLog()).length - baselineFrom;
    const scale = DOMAINS / SAMPLE;

    // Every domain due now: the schedule derived from the events, then moved to the present.
    await sql`insert into safe_spf_refresh (domain, next_due, last_checked, valid_until)
      select domain, now(), last_computed, last_computed from safe_spf`.execute(db);
    const from = (await queryLog()).length;
    let refreshed = 0;
    const unexpected: string[] = [];
    const start = performance.now();
    let finish: () => void = () => {};
    const allDone = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const refresher = startSafeSpfRefresher({
      store,
      db,
      resolver: createResolver({ nameservers: [address] }),
      settings: { minRefreshMs: 300_000, maxRefreshMs: 3_600_000 },
      concurrency: CONCURRENCY,
      onError: (error) => unexpected.push(String(error)),
      onRefreshed: (domain, outcome) => {
        if (outcome.kind !== "unchanged") unexpected.push(`${domain}: ${outcome.kind}`);
        if (++refreshed === DOMAINS) finish();
      },
    });
    await allDone;
    const wallMs = performance.now() - start;
    await refresher.stop();
    const asked = (await queryLog()).slice(from);
    const distinct = new Set(asked.map((q) => `${q.type} ${q.name}`)).size;
    if (unexpected.length > 0) throw new Error(`unexpected outcomes: ${unexpected.slice(0, 5).join("; ")}`);

    log(`Re-resolution of ${DOMAINS} domains over ${PROVIDERS} provider trees, ${DELAY_MS} ms per answer`);
    log(`  refresher (one shared resolver, ${CONCURRENCY} at a time):`);
    log(
      `    queries sent       ${asked.length} for ${distinct} distinct names (${(asked.length / distinct).toFixed(2)} per name)`,
    );
    log(`    wall time          ${seconds(wallMs)} (${(wallMs / DOMAINS).toFixed(2)} ms per domain)`);
    log(`  baseline (a resolver per domain), ${SAMPLE} domains measured, scaled ×${scale.toFixed(1)}:`);
    log(
      `    queries sent       ${Math.round(baselineQueries * scale)} (${(baselineQueries / SAMPLE).toFixed(1)} per domain)`,
    );
    log(`    wall time          ${seconds(baselineMs * scale)}`);
    log(`  ratios (baseline / refresher):`);
    log(`    queries            ${((baselineQueries * scale) / asked.length).toFixed(0)}×`);
    log(`    wall time          ${((baselineMs * scale) / wallMs).toFixed(2)}×`);
  } finally {
    await runtime.close();
    await database.drop();
    server.send("close");
  }
}

await main();
