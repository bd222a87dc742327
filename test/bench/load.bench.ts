/**
 * Issue 21, point 5: many clients at once. The service runs as production runs it (the built CLI's
 * `start`, on PostgreSQL, its access log on) over a tenant of LOAD_ROWS aggregate report rows
 * (default 50,000) and its failure reports; autocannon drives LOAD_CLIENTS keep-alive clients
 * (default 200) for LOAD_SECONDS (default 60) over the six list endpoints, all time and the last
 * 30 days of the data, mixed. Then each endpoint alone (50 clients, 8 s), as the issue measured.
 * The baseline, in the same run and against the same process: `/healthz`, which touches no
 * database, at the same concurrency: what HTTP alone costs on this machine.
 *
 * Prints requests/s, p50/p95/p99, errors and the service's peak RSS, against the figures the issue
 * measured before the fix (153 requests/s, p50 1.0 s, p97.5 3.8 s) and its goal (>= 1,000
 * requests/s mixed, p95 <= 250 ms, 0 errors).
 * `LOAD_ROWS=50000 LOAD_SECONDS=20 pnpm bench load` for a shorter run.
 */
import { readFileSync } from "node:fs";
import { createTestDatabase } from "@dmarc-ledger/db/testing";
import { catchUp } from "@dmarc-ledger/projection-engine";
import { maintainSourceRankings } from "@dmarc-ledger/report-read-models";
import { openRuntime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import autocannon from "autocannon";
import { startBuiltProcess, waitFor } from "../support/start-built-process.js";
import { DAY, scaleFor, yearEnd } from "./reporting-api/generate.js";
import { seedFailureReports, seedTenant } from "./reporting-api/seed.js";

const rows = Number(process.env.LOAD_ROWS ?? 50_000);
const clients = Number(process.env.LOAD_CLIENTS ?? 200);
const seconds = Number(process.env.LOAD_SECONDS ?? 60);
const endpointClients = 50;
const endpointSeconds = Number(process.env.LOAD_ENDPOINT_SECONDS ?? 8);
const goal = { requestsPerSecond: 1000, p95Ms: 250 };
const before = { requestsPerSecond: 153, p50Ms: 1000, p975Ms: 3800 };

const log = (line: string) => console.log(line);
const progress = (line: string) => process.stderr.write(`  … ${line}\n`);

const listEndpoints = [
  "aggregate_by_domain",
  "aggregate_by_domain_group",
  "aggregate_by_source",
  "aggregate_by_unaligned_source",
  "aggregate_by_organization",
  "forensic",
];
const periods = [
  { label: "all time", query: "start=0" },
  { label: "30 days", query: `start=${yearEnd + 1 - 30 * DAY}&end=${yearEnd}` },
];

interface Run {
  label: string;
  requests: number;
  seconds: number;
  latencies: number[];
  errors: number;
  non2xx: number;
  peakRssMb: number;
}

function quantile(sorted: number[], q: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

/** The resident set of `pid` in MB, from /proc. */
function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : 0;
}

async function drive(
  label: string,
  origin: string,
  paths: string[],
  connections: number,
  duration: number,
  apiKey: string,
  pid: number,
): Promise<Run> {
  const latencies: number[] = [];
  let non2xx = 0;
  let peakRssMb = rssMb(pid);
  const sampler = setInterval(() => {
    peakRssMb = Math.max(peakRssMb, rssMb(pid));
  }, 250);
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: origin,
        connections,
        duration,
        headers: { authorization: `Bearer ${apiKey}` },
        requests: paths.map((path) => ({ method: "GET" as const, path })),
      },
      (error, finished) => (error ? reject(error) : resolve(finished)),
    );
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      latencies.push(responseTime);
      if (statusCode < 200 || statusCode > 299) non2xx++;
    });
  });
  clearInterval(sampler);
  latencies.sort((a, b) => a - b);
  return {
    label,
    requests: latencies.length,
    seconds: result.duration,
    latencies,
    errors: result.errors + result.timeouts,
    non2xx,
    peakRssMb,
  };
}

function line(run: Run): string {
  const perSecond = run.requests / run.seconds;
  const ms = (q: number) => `${quantile(run.latencies, q).toFixed(0)} ms`.padStart(9);
  return (
    `${run.label.padEnd(44)}${perSecond.toFixed(0).padStart(7)}/s${ms(0.5)}${ms(0.95)}${ms(0.99)}` +
    `${String(run.errors).padStart(8)}${String(run.non2xx).padStart(8)}${run.peakRssMb.toFixed(0).padStart(8)} MB`
  );
}

async function main(): Promise<void> {
  const scale = { ...scaleFor(rows), forensic: Math.min(3000, Math.max(100, Math.round(rows / 50))) };
  log(
    `tenant: ${scale.rows.toLocaleString("en")} rows, ${scale.domains} domains, ${scale.sourceIps.toLocaleString("en")} source IPs, ${scale.forensic} failure reports; ${clients} clients for ${seconds} s`,
  );
  const database = await createTestDatabase("dl_load");
  let service: Awaited<ReturnType<typeof startBuiltProcess>> | null = null;
  try {
    const runtime = await openRuntime(
      {},
      { database: { kind: "postgres", url: database.url }, eventStoreUrl: null },
    );
    let tenant: Awaited<ReturnType<typeof seedTenant>>;
    try {
      tenant = await seedTenant(runtime, scale, { progress });
      await seedFailureReports(runtime, tenant.generator, scale.forensic);
      await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
      // What the projector's upkeep would have built by the time clients come.
      await maintainSourceRankings(runtime.db);
    } finally {
      await runtime.close();
    }

    service = await startBuiltProcess(
      "apps/cli/bundle/dmarc-ledger.mjs",
      {
        DATABASE_URL: database.url,
        PORT: "0",
        RATE_LIMIT_PER_SECOND: "1000000",
        RATE_LIMIT_BURST: "1000000",
        // Every client connects from 127.0.0.1 here; behind a load balancer a service sees few
        // addresses too (docs/operations.md, "Connections").
        MAX_CONNECTIONS_PER_IP: "1000",
      },
      ["start"],
    );
    const started = service;
    const listening = await waitFor(
      () => started.lines.find((entry) => entry.msg === "listening"),
      `the service to listen (stderr: ${started.stderr()})`,
    );
    const apiRoot = new URL(String(listening.apiRoot));
    const origin = apiRoot.origin;
    const pid = service.child.pid!;
    await waitFor(
      async () => ((await fetch(`${origin}/readyz`)).ok ? true : undefined),
      "the service to be ready",
    );

    const mixed = listEndpoints.flatMap((name) =>
      periods.map((period) => `${apiRoot.pathname}${name}?${period.query}`),
    );
    // Warm-up: each request once, and the plans cached.
    for (const path of mixed) {
      const response = await fetch(`${origin}${path}`, {
        headers: { authorization: `Bearer ${tenant.apiKey}` },
      });
      if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    }
    await drive("warm-up", origin, mixed, clients, 5, tenant.apiKey, pid);

    const runs: Run[] = [];
    progress("baseline: /healthz");
    runs.push(
      await drive(
        `baseline: /healthz, ${clients} clients`,
        origin,
        ["/healthz"],
        clients,
        seconds,
        tenant.apiKey,
        pid,
      ),
    );
    progress("the list endpoints, mixed");
    const mixedRun = await drive(
      `list endpoints mixed, ${clients} clients`,
      origin,
      mixed,
      clients,
      seconds,
      tenant.apiKey,
      pid,
    );
    runs.push(mixedRun);
    for (const name of listEndpoints) {
      progress(name);
      runs.push(
        await drive(
          `${name}, ${endpointClients} clients`,
          origin,
          periods.map((period) => `${apiRoot.pathname}${name}?${period.query}`),
          endpointClients,
          endpointSeconds,
          tenant.apiKey,
          pid,
        ),
      );
    }

    log(
      `\n${"run".padEnd(44)}${"req/s".padStart(9)}${"p50".padStart(9)}${"p95".padStart(9)}${"p99".padStart(9)}` +
        `${"errors".padStart(8)}${"non-2xx".padStart(8)}${"peak RSS".padStart(11)}`,
    );
    for (const run of runs) log(line(run));

    const baseline = runs[0]!;
    const rate = mixedRun.requests / mixedRun.seconds;
    const p95 = quantile(mixedRun.latencies, 0.95);
    log("");
    log(
      `mixed against the /healthz baseline: ${((100 * rate) / (baseline.requests / baseline.seconds)).toFixed(0)}% of its requests/s`,
    );
    log(
      `mixed against the issue's measurement before the fix (${before.requestsPerSecond}/s, p50 ${before.p50Ms} ms, p97.5 ${before.p975Ms} ms): ` +
        `${(rate / before.requestsPerSecond).toFixed(1)}× the requests/s, p50 ${quantile(mixedRun.latencies, 0.5).toFixed(0)} ms, p97.5 ${quantile(mixedRun.latencies, 0.975).toFixed(0)} ms`,
    );
    const met =
      rate >= goal.requestsPerSecond && p95 <= goal.p95Ms && mixedRun.errors + mixedRun.non2xx === 0;
    log(
      `goal: >= ${goal.requestsPerSecond} requests/s, p95 <= ${goal.p95Ms} ms, 0 errors: ` +
        `${rate.toFixed(0)}/s, p95 ${p95.toFixed(0)} ms, ${mixedRun.errors + mixedRun.non2xx} errors: ${met ? "met" : "MISSED"}`,
    );
  } finally {
    if (service) {
      service.child.kill("SIGTERM");
      await service.exited;
    }
    if (process.env.BENCH_KEEP_DB) log(`kept database ${database.url}`);
    else await database.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
