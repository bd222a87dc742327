/**
 * Issue #5, "Performance": the reporting API over a tenant of BENCH_ROWS aggregate report rows
 * (default 10,000,000) over a year. Measures p50/p95 of every list endpoint over HTTP for a 30-day
 * and a 365-day period, page 1 and the last page, against the same answer computed by a plain
 * GROUP BY over a flat copy of the rows in the same run; and projection throughput against a raw
 * COPY of the same rows, and against a COPY of the projections' own output into tables with the
 * same indexes. `BENCH_ROWS=200000 pnpm bench reporting-api` for a quick run.
 */
import { startService } from "@dmarc-ledger/cli";
import { createTestDatabase } from "@dmarc-ledger/db/testing";
import type { ForensicReportReceived } from "@dmarc-ledger/events";
import { catchUp } from "@dmarc-ledger/projection-engine";
import {
  aggregateByDomain,
  aggregateByDomainGroup,
  aggregateByOrganization,
  aggregateBySource,
  aggregateByUnalignedSource,
  forensicReports,
  type PageQuery,
  type QuerySchema,
} from "@dmarc-ledger/queries";
import { maintainSourceRankings } from "@dmarc-ledger/report-read-models";
import { openRuntime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { pino } from "pino";
import { testMasterKey } from "../support/master-key.js";
import {
  type ComparablePage,
  CopyBuffer,
  copyInto,
  createFlatTables,
  flatColumns,
  forensicCopyChunk,
  runBaseline,
} from "./reporting-api/baseline.js";
import { DAY, scaleFor, yearEnd } from "./reporting-api/generate.js";
import { copyProjectionOutput } from "./reporting-api/output-copy.js";
import { seedFailureReports, seedTenant } from "./reporting-api/seed.js";
import { skipAlertEvaluationOfLoad, upkeepRound } from "./reporting-api/service-at-rest.js";
import { nameAtFirstSight } from "./reporting-api/source-names.js";

const rows = Number(process.env.BENCH_ROWS ?? 10_000_000);
const maxReps = Number(process.env.BENCH_REPS ?? 20);
const minReps = 5;
const caseBudgetMs = Number(process.env.BENCH_CASE_BUDGET_MS ?? 25_000);
const perPage = 100;
const p95TargetMs = 150;
const speedupTarget = 20;
const projectionTarget = 0.5;

const log = (line: string) => console.log(line);
const progress = (line: string) => process.stderr.write(`  … ${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function quantile(sorted: number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

interface Endpoint {
  name: string;
  query: (db: Kysely<QuerySchema>, query: PageQuery) => Promise<unknown>;
  comparable: (record: Record<string, string>) => { key: string; volume: string };
}

const sourceKey = (r: Record<string, string>) => ({
  key: `${r.DomainPublished}|${r.SourceIp}|${r.Organization}`,
  volume: r.Volume!,
});

const endpoints: Endpoint[] = [
  {
    name: "aggregate_by_domain",
    query: aggregateByDomain,
    comparable: (r) => ({ key: r.Domain!, volume: r.Volume! }),
  },
  {
    name: "aggregate_by_domain_group",
    query: aggregateByDomainGroup,
    comparable: (r) => ({ key: r.DomainGroup!, volume: r.Volume! }),
  },
  { name: "aggregate_by_unaligned_source", query: aggregateByUnalignedSource, comparable: sourceKey },
  { name: "aggregate_by_source", query: aggregateBySource, comparable: sourceKey },
  {
    name: "aggregate_by_organization",
    query: aggregateByOrganization,
    comparable: (r) => ({ key: r.Organization!, volume: r.Volume! }),
  },
  {
    name: "forensic",
    query: (db, query) => forensicReports(db, query, { redact: false }),
    comparable: (r) => ({ key: `${r.Domain}|${r.Received}`, volume: r.Amount! }),
  },
];

const periods = [
  { label: "30d", start: yearEnd + 1 - 30 * DAY, end: yearEnd },
  { label: "365d", start: yearEnd + 1 - 365 * DAY, end: yearEnd },
];

interface CaseResult {
  endpoint: string;
  period: string;
  page: number;
  pageLabel: string;
  reps: number;
  api: { p50: number; p95: number };
  base: { p50: number; p95: number };
  mismatch: string | null;
}

function compare(api: ComparablePage, base: ComparablePage): string | null {
  if (api.total !== base.total) return `total ${api.total} (API) vs ${base.total} (baseline)`;
  if (api.records.length !== base.records.length)
    return `${api.records.length} records (API) vs ${base.records.length} (baseline)`;
  for (let i = 0; i < api.records.length; i++) {
    const a = api.records[i]!;
    const b = base.records[i]!;
    if (a.key !== b.key || a.volume !== b.volume)
      return `record ${i}: ${a.key}=${a.volume} (API) vs ${b.key}=${b.volume} (baseline)`;
  }
  return null;
}

async function main(): Promise<void> {
  const scale = scaleFor(rows);
  log(
    `scale: ${scale.rows.toLocaleString("en")} rows, ${scale.domains} domains, ${scale.reporters} reporters, ` +
      `${scale.sourceIps.toLocaleString("en")} source IPs (Zipf), ${scale.groups} groups, ${scale.forensic} failure reports, 365 days`,
  );
  const database = await createTestDatabase("dl_bench");
  const runtime = await openRuntime(
    {},
    { database: { kind: "postgres", url: database.url }, eventStoreUrl: null },
  );
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  let service: Awaited<ReturnType<typeof startService>> | null = null;
  try {
    const copy = new CopyBuffer();
    const tenant = await seedTenant(runtime, scale, { onRow: (row) => copy.add(row), progress });
    const { generator } = tenant;
    copy.flush();
    log(
      `generated and appended ${tenant.reports.toLocaleString("en")} reports (${generator.rowsProduced.toLocaleString("en")} rows) in ${seconds(tenant.appendMs)}`,
    );

    // Projection throughput: everything appended, applied by catch-up.
    const projectStarted = performance.now();
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    const projectMs = performance.now() - projectStarted;
    const projectionRate = generator.rowsProduced / (projectMs / 1000);
    // What the aggregate projections wrote (rankings are upkeep's, timed below).
    const outputTables = [
      ...new Set(
        allProjections
          .filter((projection) => projection.handles.has("AggregateReportReceived"))
          .flatMap((projection) => projection.tables)
          .filter((table) => !table.startsWith("source_ranking")),
      ),
    ];
    const output = await copyProjectionOutput(client, outputTables);

    // Failure reports (not timed).
    const forensic: ForensicReportReceived[] = await seedFailureReports(runtime, generator, scale.forensic);
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });

    // The by-source rankings of every calendar month and year, as the projector builds them when
    // idle: timed on their own, since answers are exact without them (only slower).
    const rankingsStarted = performance.now();
    const rankings = await maintainSourceRankings(runtime.db);
    const rankingsMs = performance.now() - rankingsStarted;
    const rankedGroups = rankings.reduce((sum, ranking) => sum + ranking.groups, 0);
    const slowest = rankings.reduce((a, b) => (a && a.ms >= b.ms ? a : b), rankings[0]);
    log(
      `source rankings: ${rankings.length} built (${rankedGroups.toLocaleString("en")} groups) in ${seconds(rankingsMs)}` +
        (slowest
          ? `; slowest ${slowest.scope} ${new Date(slowest.bucket.start * 1000).toISOString().slice(0, 10)}…: ${seconds(slowest.ms)}`
          : ""),
    );

    // The baseline: a raw COPY of the same rows into a plain table.
    await createFlatTables(client);
    const copyStarted = performance.now();
    await copyInto(client, "bench_flat", flatColumns, copy.chunks);
    const copyMs = performance.now() - copyStarted;
    const copyRate = generator.rowsProduced / (copyMs / 1000);
    copy.chunks.length = 0;
    await copyInto(client, "bench_flat_forensic", "identity, domain, received, subject, amount, headers", [
      forensicCopyChunk(forensic, (r) => Math.floor(Date.parse(r.arrivalDate!) / 1000)),
    ]);
    // An index on the period column, so the baseline's 30-day queries need not scan the year.
    await client.query("create index bench_flat_by_t on bench_flat (t)");
    await client.query("vacuum analyze");
    // Write the load's dirty pages now, not during the first measured requests.
    await client.query("checkpoint");

    const sizes = await client.query<{ name: string; n: string; size: string }>(
      `select relname as name, n_live_tup::text as n, pg_size_pretty(pg_total_relation_size(relid)) as size
       from pg_stat_user_tables where relname in ('agg_domain','agg_organization','agg_source','source_ranking','forensic_report','bench_flat','events')
       order by relname`,
    );
    log(
      `tables: ${sizes.rows.map((r) => `${r.name} ${Number(r.n).toLocaleString("en")} rows ${r.size}`).join("; ")}`,
    );
    log(
      `projection: ${Math.round(projectionRate).toLocaleString("en")} rows/s (${seconds(projectMs)}); ` +
        `raw COPY: ${Math.round(copyRate).toLocaleString("en")} rows/s (${seconds(copyMs)}); ` +
        `ratio ${(100 * (projectionRate / copyRate)).toFixed(1)}% (target ≥ ${projectionTarget * 100}%): ` +
        `target ${projectionRate / copyRate >= projectionTarget ? "met" : "MISSED"}`,
    );
    log(
      `projection output: ${output.rows.toLocaleString("en")} rows (${(output.bytes / 1e6).toFixed(0)} MB as COPY text) in ` +
        `${outputTables.join(", ")}; COPY into tables with the same indexes: ${seconds(output.ms)}, ` +
        `${(100 * (output.ms / projectMs)).toFixed(1)}% of the projection's time ` +
        `(the raw COPY of the report rows: ${(100 * (copyMs / projectMs)).toFixed(1)}%)`,
    );

    // What the service would do beside the timed requests, done before it starts: naming the
    // sources at first sight, the rest of the upkeep (day totals, sender rankings), and the
    // alert evaluation of the bulk load (skipAlertEvaluationOfLoad says why).
    const settleStarted = performance.now();
    await nameAtFirstSight(runtime);
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    const { summary } = await upkeepRound(runtime.db, yearEnd);
    const skipped = await skipAlertEvaluationOfLoad(runtime);
    log(
      `before the service: sources named at first sight, upkeep (${summary}), the alert evaluator moved past ` +
        `${skipped.toLocaleString("en")} loaded reports, in ${seconds(performance.now() - settleStarted)}`,
    );

    // The API over HTTP.
    service = await startService({
      runtime,
      env: {
        RATE_LIMIT_PER_SECOND: "100000",
        RATE_LIMIT_BURST: "100000",
        MASTER_KEY: testMasterKey,
        // Reverse DNS of the bench's addresses would run beside the timed requests.
        SOURCE_IP_RESOLVER: "off",
      },
      port: 0,
      logger: pino({ level: "silent" }),
      bootstrapTenant: false,
    });
    // The service's Safe SPF worker starts from its own checkpoint, which the bulk load above never
    // moved: it first reads every event once. Measure after that, as a running service would be.
    const head = await runtime.store.headPosition();
    const workerStarted = performance.now();
    for (;;) {
      const { rows: checkpoint } = await client.query<{ position: string }>(
        "select position::text from projection_checkpoint where projection = 'process:safe_spf'",
      );
      if (head === null || (checkpoint[0] && BigInt(checkpoint[0].position) >= head)) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    log(`the Safe SPF worker caught up with the load in ${seconds(performance.now() - workerStarted)}`);
    const apiRoot = service.apiRoot;
    const callApi = async (endpoint: Endpoint, start: number, end: number, page: number) => {
      const url = `${apiRoot}${endpoint.name}?start=${start}&end=${end}&page=${page}&per_page=${perPage}`;
      const response = await fetch(url, { headers: { Authorization: `Bearer ${tenant.apiKey}` } });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${url}: ${response.status} ${body.slice(0, 300)}`);
      return body;
    };
    const toComparable = (endpoint: Endpoint, body: string): ComparablePage => {
      const json = JSON.parse(body) as { total: number | string; records: Record<string, string>[] };
      return { total: Number(json.total), records: json.records.map(endpoint.comparable) };
    };

    // Warm-up: the first request of each endpoint pays for connections and plans.
    for (const endpoint of endpoints) await callApi(endpoint, periods[0]!.start, periods[0]!.end, 1);

    const results: CaseResult[] = [];
    for (const endpoint of endpoints) {
      for (const period of periods) {
        const first = toComparable(endpoint, await callApi(endpoint, period.start, period.end, 1));
        const lastPage = Math.max(1, Math.ceil(first.total / perPage));
        for (const page of [1, lastPage]) {
          if (
            page === 1 &&
            results.some((r) => r.endpoint === endpoint.name && r.period === period.label && r.page === 1)
          )
            continue;
          const args = { tenantId: tenant.tenantId, start: period.start, end: period.end, page, perPage };
          // Warm-up: one of each, and the equivalence check.
          const warmApi = performance.now();
          const apiPage = toComparable(endpoint, await callApi(endpoint, period.start, period.end, page));
          const apiMs = performance.now() - warmApi;
          const warmBase = performance.now();
          const basePage = await runBaseline(client, endpoint.name, args);
          const baseMs = performance.now() - warmBase;
          const mismatch = compare(apiPage, basePage);
          if (mismatch) log(`!!! MISMATCH ${endpoint.name} ${period.label} page ${page}: ${mismatch}`);
          const reps = Math.max(minReps, Math.min(maxReps, Math.floor(caseBudgetMs / (apiMs + baseMs))));
          const apiTimes: number[] = [];
          const baseTimes: number[] = [];
          for (let i = 0; i < reps; i++) {
            let t0 = performance.now();
            await callApi(endpoint, period.start, period.end, page);
            apiTimes.push(performance.now() - t0);
            t0 = performance.now();
            await runBaseline(client, endpoint.name, args);
            baseTimes.push(performance.now() - t0);
          }
          apiTimes.sort((a, b) => a - b);
          baseTimes.sort((a, b) => a - b);
          const result: CaseResult = {
            endpoint: endpoint.name,
            period: period.label,
            page,
            pageLabel: page === 1 ? "1" : `${page} (last)`,
            reps,
            api: { p50: quantile(apiTimes, 0.5), p95: quantile(apiTimes, 0.95) },
            base: { p50: quantile(baseTimes, 0.5), p95: quantile(baseTimes, 0.95) },
            mismatch,
          };
          results.push(result);
          progress(
            `${endpoint.name} ${period.label} page ${page}: API p95 ${result.api.p95.toFixed(1)} ms, baseline p95 ${result.base.p95.toFixed(1)} ms`,
          );
        }
      }
    }

    // The table.
    const ms = (v: number) => v.toFixed(1).padStart(9);
    log(
      `\n${"endpoint".padEnd(30)}${"period".padEnd(7)}${"page".padEnd(11)}${"reps".padStart(5)}` +
        `${"API p50".padStart(9)}${"API p95".padStart(9)}${"base p50".padStart(9)}${"base p95".padStart(9)}` +
        `${"×p50".padStart(8)}${"×p95".padStart(8)}  (ms)`,
    );
    for (const r of results) {
      log(
        `${r.endpoint.padEnd(30)}${r.period.padEnd(7)}${r.pageLabel.padEnd(11)}${String(r.reps).padStart(5)}` +
          `${ms(r.api.p50)}${ms(r.api.p95)}${ms(r.base.p50)}${ms(r.base.p95)}` +
          `${(r.base.p50 / r.api.p50).toFixed(1).padStart(8)}${(r.base.p95 / r.api.p95).toFixed(1).padStart(8)}` +
          `${r.mismatch ? "  MISMATCH" : ""}`,
      );
    }

    // Targets.
    log("");
    const missedP95 = new Set<string>();
    for (const r of results) {
      const where = `${r.endpoint} ${r.period} page ${r.pageLabel}`;
      if (r.period === "365d") {
        const met = r.api.p95 <= p95TargetMs;
        if (!met) missedP95.add(r.endpoint);
        log(
          `p95 ≤ ${p95TargetMs} ms, ${where}: ${r.api.p95.toFixed(1)} ms: target ${met ? "met" : "MISSED"}`,
        );
      }
      const speedup = r.base.p50 / r.api.p50;
      log(
        `≥ ${speedupTarget}× baseline (p50), ${where}: ${speedup.toFixed(1)}×: target ${speedup >= speedupTarget ? "met" : "MISSED"}`,
      );
    }
    const mismatches = results.filter((r) => r.mismatch).length;
    log(
      mismatches
        ? `!!! ${mismatches} case(s) where the API and the baseline disagree`
        : "API and baseline answers agree on every measured page",
    );
    // Figures of wrong answers are no figures: the run fails and its block stays as it was.
    if (mismatches) process.exitCode = 1;

    // Where time goes for the endpoints that missed the p95 target: their 365-day last page.
    if (missedP95.size > 0) await explainMisses(database.url, tenant.tenantId, results, missedP95);
  } finally {
    await service?.stop();
    await client.end();
    await runtime.close();
    // BENCH_KEEP_DB=1 keeps the generated database for trying queries by hand.
    if (process.env.BENCH_KEEP_DB) log(`kept database ${database.url}`);
    else await database.drop();
  }
}

async function explainMisses(url: string, tenantId: string, results: CaseResult[], missed: Set<string>) {
  const captured: { sql: string; parameters: readonly unknown[] }[] = [];
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const db = new Kysely<QuerySchema>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === "query")
        captured.push({ sql: event.query.sql, parameters: event.query.parameters });
    },
  });
  const period = periods.find((p) => p.label === "365d")!;
  try {
    for (const endpoint of endpoints.filter((e) => missed.has(e.name))) {
      const deep = results.filter((r) => r.endpoint === endpoint.name && r.period === "365d").at(-1)!;
      captured.length = 0;
      await endpoint.query(db, { tenantId, start: period.start, end: period.end, page: deep.page, perPage });
      // The query proper: the longest (others choose a ranking, or set up a transaction).
      const main = captured
        .filter((query) => /^\s*(with|select)\b/i.test(query.sql))
        .reduce((a, b) => (b.sql.length > a.sql.length ? b : a));
      const { rows: plan } = await pool.query<{ "QUERY PLAN": string }>(
        `explain (analyze, buffers) ${main.sql}`,
        main.parameters as unknown[],
      );
      log(`\nEXPLAIN (ANALYZE, BUFFERS) ${endpoint.name} 365d page ${deep.page}:`);
      const lines = plan.map((r) => r["QUERY PLAN"]);
      // The top of the plan, then its scans and the total: the rest is the per-page picks.
      const scans = lines
        .slice(30)
        .filter((line) => /Scan on (agg_|domain|forensic)|Execution Time/.test(line));
      for (const line of [...lines.slice(0, 30), "  …", ...scans]) log(`  ${line}`);
    }
  } finally {
    await db.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
