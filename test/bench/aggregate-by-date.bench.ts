/**
 * Issue 23, "Fast", for the daily series: over a tenant of BENCH_ROWS aggregate report rows
 * (default 10,000,000) over 365 days (the reporting-api bench's traffic), the p95 of
 * GET aggregate_by_date for all domains over the 365 days, over HTTP, against a plain GROUP BY of
 * the same answer over a flat copy of the rows in the same run; and the projection rate of its
 * read model (agg_domain_day) against a COPY of the projection's own output into a table with the
 * same indexes. `BENCH_ROWS=200000 pnpm bench aggregate-by-date` for a quick run.
 * `BENCH_KEEP_DB=1` keeps the loaded database and prints its name; `BENCH_DATABASE=<name>` measures
 * the requests again over a kept one (no load, no projection timing).
 */
import { startService } from "@dmarc-ledger/cli";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { catchUp } from "@dmarc-ledger/projection-engine";
import { aggregateByDateProjection, maintainTenantDayTotals } from "@dmarc-ledger/report-read-models";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import pg from "pg";
import { pino } from "pino";
import { testMasterKey } from "../support/master-key.js";
import { CopyBuffer, copyInto, createFlatTables, flatColumns } from "./reporting-api/baseline.js";
import { DAY, scaleFor, yearEnd } from "./reporting-api/generate.js";
import { keptDatabase, keptTenant } from "./reporting-api/kept-database.js";
import { copyProjectionOutput } from "./reporting-api/output-copy.js";
import { seedTenant } from "./reporting-api/seed.js";
import { skipAlertEvaluationOfLoad } from "./reporting-api/service-at-rest.js";

const rows = Number(process.env.BENCH_ROWS ?? 10_000_000);
const maxReps = Number(process.env.BENCH_REPS ?? 30);
const minReps = 10;
const caseBudgetMs = Number(process.env.BENCH_CASE_BUDGET_MS ?? 25_000);
const p95TargetMs = 150;

const log = (line: string) => console.log(line);
const progress = (line: string) => process.stderr.write(`  … ${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const quantile = (sorted: number[], q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;

const start = yearEnd + 1 - 365 * DAY;
const end = yearEnd;

/** The fields compared between the API and the baseline, per day. */
interface Day {
  date: string;
  volume: string;
  dmarc: string;
  dkim: string;
  spf: string;
  none: string;
  quarantine: string;
  reject: string;
}

/**
 * The same series by a plain GROUP BY over the flat rows (every generated report covers one UTC
 * day from midnight), the tenant's domains read from its domain table, every day of the period
 * present.
 */
const baselineSql = `
  with sums as (
    select f.t / 86400 as day, sum(f.count) as volume,
      coalesce(sum(f.count) filter (where f.policy_dkim = 'pass' or f.policy_spf = 'pass'), 0) as dmarc,
      coalesce(sum(f.count) filter (where f.dkim_result = 'pass'), 0) as dkim,
      coalesce(sum(f.count) filter (where f.spf_result = 'pass'), 0) as spf,
      coalesce(sum(f.count) filter (where f.disposition = 'none'), 0) as none,
      coalesce(sum(f.count) filter (where f.disposition = 'quarantine'), 0) as quarantine,
      coalesce(sum(f.count) filter (where f.disposition = 'reject'), 0) as reject
    from bench_flat f
    where f.t >= $2 and f.t <= $3 and f.domain in (select domain from domain where tenant_id = $1)
    group by 1
  )
  select to_char(date '1970-01-01' + d.day::int, 'YYYY-MM-DD') as date,
    coalesce(s.volume, 0)::text as volume, coalesce(s.dmarc, 0)::text as dmarc,
    coalesce(s.dkim, 0)::text as dkim, coalesce(s.spf, 0)::text as spf,
    coalesce(s.none, 0)::text as none, coalesce(s.quarantine, 0)::text as quarantine,
    coalesce(s.reject, 0)::text as reject
  from generate_series($2::bigint / 86400, $3::bigint / 86400) as d(day)
  left join sums s on s.day = d.day
  order by d.day`;

async function main(): Promise<void> {
  const scale = scaleFor(rows);
  log(
    `scale: ${scale.rows.toLocaleString("en")} rows, ${scale.domains} domains, ${scale.sourceIps.toLocaleString("en")} source IPs, 365 days`,
  );
  const kept = process.env.BENCH_DATABASE;
  const database: TestDatabase = kept
    ? keptDatabase(kept, "dl_bench_series")
    : await createTestDatabase("dl_bench_series");
  const runtime = await openRuntime(
    {},
    { database: { kind: "postgres", url: database.url }, eventStoreUrl: null },
  );
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const services: Awaited<ReturnType<typeof startService>>[] = [];
  try {
    const tenant = kept ? await keptTenant(runtime, client) : await load(runtime, client, scale);
    if (kept) {
      // The day totals, as the upkeep keeps them, of the rows added since they were built.
      await maintainTenantDayTotals(runtime.db);
      log(`measured again over the kept database ${kept}`);
    }
    const baseline = async (): Promise<Day[]> =>
      (await client.query<Day>(baselineSql, [tenant.tenantId, start, end])).rows;

    const url = (root: string) => `${root}aggregate_by_date?start=${start}&end=${end}&per_page=1000`;
    const callApi = async (root: string): Promise<Day[]> => {
      const response = await fetch(url(root), { headers: { Authorization: `Bearer ${tenant.apiKey}` } });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${url(root)}: ${response.status} ${body.slice(0, 300)}`);
      const records = (JSON.parse(body) as { records: Record<string, string>[] }).records;
      return records.map((r) => ({
        date: r.Date!,
        volume: r.Volume!,
        dmarc: r.DMARC!,
        dkim: r.DKIM!,
        spf: r.SPF!,
        none: r.DispositionNone!,
        quarantine: r.DispositionQuarantine!,
        reject: r.DispositionReject!,
      }));
    };

    // Without the answer cache (every request computes the series), then with it (the default:
    // repeated requests while the read models are unchanged are answered from memory).
    const skipped = await skipAlertEvaluationOfLoad(runtime);
    log(
      `the alert evaluator moved past the ${skipped.toLocaleString("en")} loaded aggregate reports unevaluated (skipAlertEvaluationOfLoad says why)`,
    );
    for (const [label, cacheBytes] of [
      ["answer cache off", "0"],
      ["answer cache on", String(64 * 1024 * 1024)],
    ] as const) {
      const service = await startService({
        runtime,
        env: {
          MASTER_KEY: testMasterKey,
          RATE_LIMIT_PER_SECOND: "100000",
          RATE_LIMIT_BURST: "100000",
          API_ANSWER_CACHE_BYTES: cacheBytes,
          // The series reads the day totals kept above; the service's upkeep would build the
          // source and sender rankings of the 10M rows (minutes) beside the timed requests.
          RANKING_INTERVAL_MS: String(86_400_000),
        },
        port: 0,
        logger: pino({ level: "silent" }),
        bootstrapTenant: false,
      });
      services.push(service);
      const warmApi = performance.now();
      const apiAnswer = await callApi(service.apiRoot);
      const apiMs = performance.now() - warmApi;
      const warmBase = performance.now();
      const baseAnswer = await baseline();
      const baseMs = performance.now() - warmBase;
      const same = JSON.stringify(apiAnswer) === JSON.stringify(baseAnswer);
      if (!same) {
        const at = apiAnswer.findIndex((day, i) => JSON.stringify(day) !== JSON.stringify(baseAnswer[i]));
        log(
          `!!! MISMATCH at ${at}: ${JSON.stringify(apiAnswer[at])} (API) vs ${JSON.stringify(baseAnswer[at])} (baseline)`,
        );
      }
      const reps = Math.max(minReps, Math.min(maxReps, Math.floor(caseBudgetMs / (apiMs + baseMs))));
      const apiTimes: number[] = [];
      const baseTimes: number[] = [];
      for (let i = 0; i < reps; i++) {
        let t0 = performance.now();
        await callApi(service.apiRoot);
        apiTimes.push(performance.now() - t0);
        t0 = performance.now();
        await baseline();
        baseTimes.push(performance.now() - t0);
      }
      apiTimes.sort((a, b) => a - b);
      baseTimes.sort((a, b) => a - b);
      const api = { p50: quantile(apiTimes, 0.5), p95: quantile(apiTimes, 0.95) };
      const base = { p50: quantile(baseTimes, 0.5), p95: quantile(baseTimes, 0.95) };
      log(
        `aggregate_by_date, all ${scale.domains} domains, 365 days (${label}, ${reps} reps): ` +
          `API p50 ${api.p50.toFixed(1)} ms, p95 ${api.p95.toFixed(1)} ms; ` +
          `GROUP BY baseline p50 ${base.p50.toFixed(1)} ms, p95 ${base.p95.toFixed(1)} ms; ` +
          `×${(base.p95 / api.p95).toFixed(1)} at p95; p95 ≤ ${p95TargetMs} ms: target ${api.p95 <= p95TargetMs ? "met" : "MISSED"}` +
          `${same ? "; answers agree (365 days)" : "; ANSWERS DIFFER"}`,
      );
      await service.stop();
      services.pop();
    }
  } finally {
    for (const service of services) await service.stop();
    await client.end();
    await runtime.close();
    if (process.env.BENCH_KEEP_DB) log(`kept database ${database.url}`);
    else await database.drop();
  }
}

/** Loads the tenant, times the projection of the series' read model, and copies the flat rows. */
async function load(
  runtime: Runtime,
  client: pg.Client,
  scale: ReturnType<typeof scaleFor>,
): Promise<{ tenantId: string; apiKey: string }> {
  const copy = new CopyBuffer();
  const tenant = await seedTenant(runtime, scale, { onRow: (row) => copy.add(row), progress });
  copy.flush();
  const produced = tenant.generator.rowsProduced;
  log(
    `generated and appended ${tenant.reports.toLocaleString("en")} reports (${produced.toLocaleString("en")} rows) in ${seconds(tenant.appendMs)}`,
  );

  // The other projections first (not timed), then the series' own over every event.
  const others = allProjections.filter((projection) => projection.name !== aggregateByDateProjection.name);
  await catchUp({ store: runtime.store, db: runtime.db, projections: others });
  await client.query("checkpoint");
  const projectStarted = performance.now();
  await catchUp({ store: runtime.store, db: runtime.db, projections: [aggregateByDateProjection] });
  const projectMs = performance.now() - projectStarted;
  const output = await copyProjectionOutput(client, aggregateByDateProjection.tables);
  log(
    `projection aggregate_by_date: ${Math.round(produced / (projectMs / 1000)).toLocaleString("en")} report rows/s ` +
      `(${seconds(projectMs)}), writing ${output.rows.toLocaleString("en")} rows of agg_domain_day; ` +
      `COPY of that output into a table with the same indexes: ${seconds(output.ms)}, ` +
      `${(100 * (output.ms / projectMs)).toFixed(1)}% of the projection's time`,
  );

  // The tenant's day totals, as the projector's upkeep keeps them.
  const totalsStarted = performance.now();
  const totals = await maintainTenantDayTotals(runtime.db);
  log(
    `tenant day totals: ${totals.map((t) => `${t.days} days`).join(", ")} built in ${seconds(performance.now() - totalsStarted)}`,
  );

  await createFlatTables(client);
  await copyInto(client, "bench_flat", flatColumns, copy.chunks);
  copy.chunks.length = 0;
  await client.query("create index bench_flat_by_t on bench_flat (t)");
  await client.query("vacuum analyze");
  await client.query("checkpoint");

  return tenant;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
