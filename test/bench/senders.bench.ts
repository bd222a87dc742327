/**
 * Issue 23, "Fast": GET aggregate_by_sender and GET policy_impact over HTTP, for a tenant of
 * BENCH_ROWS aggregate report rows (default 10,000,000) over a year (test/bench/reporting-api's
 * generator), each with its ratio against a plain GROUP BY of the same answer over a flat copy of
 * the rows and of the sources' names (each read from its stream, the sender by the API's own rule,
 * senderOf), in the same run; and the sender facts' projection rate
 * against a COPY of their own output. Target: p95 ≤ 150 ms at 10M rows, 365 days.
 * Then the same pages while reports arrive: BENCH_ARRIVING more rows (default 10,000: at 10M rows
 * a year, nine hours of a tenant's reports) projected after the rankings' build and not yet
 * caught up, so each answer adds them to the rankings (sender-ranking-patch.ts), against the same
 * GROUP BY; and once more after the upkeep's next round has caught the rankings up
 * (catch-up-sender-ranking.ts), with the time that took.
 * `BENCH_ROWS=200000 pnpm bench senders` for a quick run.
 * `BENCH_KEEP_DB=1` keeps the database afterwards (for EXPLAIN ANALYZE), `BENCH_DATABASE=<name>`
 * measures a kept one again (each run adds its arriving reports to it and to its GROUP BY's table),
 * `BENCH_REPS` sets the repetitions.
 */
import { startService } from "@dmarc-ledger/cli";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { newEvent, streams } from "@dmarc-ledger/events";
import { catchUp } from "@dmarc-ledger/projection-engine";
import { type SenderRankingChange, senderOf } from "@dmarc-ledger/report-read-models";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import pg from "pg";
import { pino } from "pino";
import { testMasterKey } from "../support/master-key.js";
import { CopyBuffer, copyInto, createFlatTables, flatColumns } from "./reporting-api/baseline.js";
import { DAY, scaleFor, TrafficGenerator, yearEnd } from "./reporting-api/generate.js";
import { keptDatabase, keptTenant } from "./reporting-api/kept-database.js";
import { copyProjectionOutput } from "./reporting-api/output-copy.js";
import { inParallel, seedTenant } from "./reporting-api/seed.js";
import {
  skipAlertEvaluationOfLoad,
  untilAlertsCaughtUp,
  upkeepRound,
} from "./reporting-api/service-at-rest.js";
import {
  nameAtFirstSight,
  namingFromStream,
  seedApprovals,
  seedSourceNames,
  untilResolverCaughtUp,
} from "./reporting-api/source-names.js";

const rows = Number(process.env.BENCH_ROWS ?? 10_000_000);
const reps = Number(process.env.BENCH_REPS ?? 20);
const arriving = Number(process.env.BENCH_ARRIVING ?? 10_000);
const perPage = 100;
const p95TargetMs = 150;
const log = (line: string) => console.log(line);
const progress = (line: string) => process.stderr.write(`  … ${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const quantile = (sorted: number[], q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;

const meta = { causedBy: "bench" };
/** Answers of the API that differ from the GROUP BY's, over every page measured. */
let mismatches = 0;

async function main(): Promise<void> {
  const scale = scaleFor(rows);
  log(
    `scale: ${scale.rows.toLocaleString("en")} rows, ${scale.domains} domains, ${scale.sourceIps.toLocaleString("en")} source IPs, 365 days`,
  );
  const kept = process.env.BENCH_DATABASE;
  const database: TestDatabase = kept
    ? keptDatabase(kept, "dl_bench_senders")
    : await createTestDatabase("dl_bench_senders");
  const runtime = await openRuntime(
    {},
    { database: { kind: "postgres", url: database.url }, eventStoreUrl: null },
  );
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  let service: Awaited<ReturnType<typeof startService>> | null = null;
  try {
    const tenant = kept ? await keptTenant(runtime, client) : await load(runtime, client, scale);
    if (kept) log(`measured again over ${kept}`);
    await client.query("drop table if exists bench_names");
    await client.query(
      "create table bench_names (source_ip text primary key, service_name text, source_domain text not null, asn_organization text)",
    );
    const named = await nameBaselineSources(client, runtime);
    // The GROUP BY names a sender by the API's own rule, over its own reading of the names.
    const sender = senderOf("n").compile(runtime.db).sql;
    log(`baseline names: ${named.toLocaleString("en")} addresses, read from their streams`);
    // One round of the projector's upkeep (the sender rankings around yearEnd's day, where the
    // data ends), so that the service's own first round finds nothing to build.
    const upkeepStarted = performance.now();
    const { summary, senders: rankings } = await upkeepRound(runtime.db, yearEnd);
    log(
      `upkeep: ${summary} in ${seconds(performance.now() - upkeepStarted)}; sender rankings (${described(rankings)})`,
    );
    await client.query("vacuum analyze");
    await client.query("checkpoint");

    const skipped = await skipAlertEvaluationOfLoad(runtime);
    log(
      `the alert evaluator moved past the ${skipped.toLocaleString("en")} loaded aggregate reports unevaluated (skipAlertEvaluationOfLoad says why)`,
    );
    service = await startService({
      runtime,
      env: {
        RATE_LIMIT_PER_SECOND: "100000",
        RATE_LIMIT_BURST: "100000",
        API_ANSWER_CACHE_BYTES: "0",
        MASTER_KEY: testMasterKey,
        // Reverse DNS of the bench's addresses would rename them while they are measured.
        SOURCE_IP_RESOLVER: "off",
        // The bench runs the upkeep itself: the service's would catch the stale rankings up in
        // the middle of "reports arriving".
        RANKING_INTERVAL_MS: String(86_400_000),
      },
      port: 0,
      logger: pino({ level: "silent" }),
      bootstrapTenant: false,
    });
    const verdicts = await measure(client, sender, service.apiRoot, tenant.apiKey, "rankings current");

    // Reports arriving after the build: projected, not yet caught up by the upkeep (its next
    // round would); every answer adds them to the rankings meanwhile.
    const arrivingStarted = performance.now();
    const copy = new CopyBuffer();
    const generator = new TrafficGenerator(
      { ...scale, rows: arriving },
      { seed: 7, prefix: `arriving-${Date.now().toString(36)}` },
    );
    await inParallel(
      () => generator.next((row) => copy.add(row)),
      6,
      async (report) => {
        await runtime.store.append(
          streams.aggregateReport(report.payload.identity),
          [newEvent("AggregateReportReceived", report.payload, meta)],
          "no_stream",
        );
      },
    );
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    copy.flush();
    await copyInto(client, "bench_flat", flatColumns, copy.chunks);
    await client.query("analyze bench_flat");
    const { rows: deltas } = await client.query<{ n: string }>(
      "select count(*)::text as n from agg_sender_delta",
    );
    log(
      `\nreports arriving: ${generator.rowsProduced.toLocaleString("en")} rows projected in ${seconds(performance.now() - arrivingStarted)}, ` +
        `${Number(deltas[0]!.n).toLocaleString("en")} sender fact deltas after the rankings' build (added per request)`,
    );
    // The service's alert evaluator reads the arrived reports too, and its resolver names their
    // new addresses: timed after both have.
    await untilAlertsCaughtUp(runtime);
    const project = () => catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    await untilResolverCaughtUp(runtime, { between: project });
    await project();
    await nameBaselineSources(client, runtime);
    verdicts.push(...(await measure(client, sender, service.apiRoot, tenant.apiKey, "reports arriving")));

    // The projector's next upkeep round (every RANKING_INTERVAL_MS, 60 s by default) catches the
    // stale rankings up at the cost of what arrived; the same pages after it.
    const catchUpStarted = performance.now();
    const { senders: caught } = await upkeepRound(runtime.db, yearEnd);
    log(
      `\nupkeep after the arrivals: ${seconds(performance.now() - catchUpStarted)}; sender rankings (${described(caught)})`,
    );
    verdicts.push(
      ...(await measure(client, sender, service.apiRoot, tenant.apiKey, "after the upkeep's catch-up")),
    );
    log("");
    for (const line of verdicts) log(line);
    log(
      mismatches === 0
        ? "answers agree with the GROUP BY's"
        : `${mismatches} answer(s) differ from the GROUP BY's`,
    );
    // Figures of wrong answers are no figures: the run fails and its block stays as it was.
    if (mismatches > 0) process.exitCode = 1;
  } finally {
    await service?.stop();
    await client.end();
    await runtime.close();
    // BENCH_KEEP_DB=1 leaves the database for EXPLAIN ANALYZE (its name is printed).
    if (process.env.BENCH_KEEP_DB === "1" || kept) log(`kept database ${database.url}`);
    else await database.drop();
  }
}

/** What an upkeep round did to the sender rankings, one ranking after another. */
const described = (changes: readonly SenderRankingChange[]) =>
  changes
    .map(
      (r) =>
        `${Math.round((r.bucket.end + 1 - r.bucket.start) / DAY)} d: ` +
        (r.outcome === "dropped"
          ? "dropped (its bucket no longer standard)"
          : `${r.outcome}, ${r.groups} groups, ${r.addresses} addresses, ${seconds(r.ms ?? 0)}`),
    )
    .join("; ");

/** Loads the tenant of `scale`, the sources' names and approvals, and the GROUP BY's flat tables. */
async function load(
  runtime: Runtime,
  client: pg.Client,
  scale: ReturnType<typeof scaleFor>,
): Promise<{ tenantId: string; apiKey: string }> {
  const copy = new CopyBuffer();
  const ips = new Set<string>();
  const tenant = await seedTenant(runtime, scale, {
    onRow: (row) => {
      copy.add(row);
      ips.add(row.sourceIp);
    },
    progress,
  });
  copy.flush();
  const projectStarted = performance.now();
  await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
  const projectMs = performance.now() - projectStarted;

  // Names for the sources as the resolver appends them, the rest named at first sight; approvals.
  await seedSourceNames(runtime, ips);
  await nameAtFirstSight(runtime);
  await seedApprovals(runtime, tenant.tenantId, scale.domains);
  await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
  const senderProjection = allProjections.find((projection) => projection.name === "aggregate_by_sender")!;
  const output = await copyProjectionOutput(client, [...senderProjection.tables]);
  log(
    `projection of every read model: ${seconds(projectMs)} for ${tenant.generator.rowsProduced.toLocaleString("en")} rows; ` +
      `agg_sender_fact: ${output.rows.toLocaleString("en")} rows, a COPY of them into a table with the same indexes ${seconds(output.ms)}`,
  );

  // The baseline: the rows flat, grouped per request with the names (bench_names).
  await createFlatTables(client);
  await copyInto(client, "bench_flat", flatColumns, copy.chunks);
  copy.chunks.length = 0;
  await client.query("create index bench_flat_by_t on bench_flat (t)");
  return tenant;
}

/**
 * Adds to bench_names the naming of every address of bench_flat it lacks, read from the
 * address's stream (namingFromStream); returns how many it added.
 */
async function nameBaselineSources(client: pg.Client, runtime: Runtime): Promise<number> {
  const { rows: missing } = await client.query<{ source_ip: string }>(
    "select distinct f.source_ip from bench_flat f where not exists (select from bench_names n where n.source_ip = f.source_ip)",
  );
  const ips = missing.map((row) => row.source_ip);
  for (let i = 0; i < ips.length; i += 5_000) {
    const slice = ips.slice(i, i + 5_000);
    const namings: Awaited<ReturnType<typeof namingFromStream>>[] = new Array(slice.length);
    let next = 0;
    await inParallel(
      () => (next < slice.length ? next++ : null),
      8,
      async (index) => {
        namings[index] = await namingFromStream(runtime.store, slice[index]!);
      },
    );
    await client.query(
      "insert into bench_names select * from unnest($1::text[], $2::text[], $3::text[], $4::text[])",
      [
        slice,
        namings.map((n) => n.service_name),
        namings.map((n) => n.source_domain),
        namings.map((n) => n.asn_organization),
      ],
    );
  }
  await client.query("analyze bench_names");
  return ips.length;
}

/**
 * Both endpoints, 30 and 365 days, first and last page: the API's p50 and p95 over HTTP against
 * the GROUP BY's, alternating (so neither finds the other's pages cached), each answer compared
 * with the GROUP BY's. Returns the 365-day verdicts.
 */
async function measure(
  client: pg.Client,
  sender: string,
  apiRoot: string,
  apiKey: string,
  label: string,
): Promise<string[]> {
  const baseline = async (endpoint: string, start: number, end: number, page: number) => {
    const failing = endpoint === "policy_impact";
    const { rows: found } = await client.query<{
      domain: string;
      sender: string;
      n: string;
      total: string;
    }>(
      `select f.domain, ${sender} as sender, sum(f.count)::text as n, count(*) over ()::text as total
       from bench_flat f left join bench_names n on n.source_ip = f.source_ip
       where f.t >= $1 and f.t <= $2
         ${failing ? "and f.policy_dkim <> 'pass' and f.policy_spf <> 'pass' and f.disposition in ('none', 'quarantine')" : ""}
       group by 1, 2 order by sum(f.count) desc, f.domain collate "C", ${sender} collate "C" limit $3 offset $4`,
      [start, end, perPage, (page - 1) * perPage],
    );
    return {
      total: Number(found[0]?.total ?? 0),
      keys: found.map((r) => `${r.domain}|${r.sender}=${r.n}`),
    };
  };
  const call = async (endpoint: string, start: number, end: number, page: number) => {
    const policy = endpoint === "policy_impact" ? "&policy=reject" : "";
    const url = `${apiRoot}${endpoint}?start=${start}&end=${end}&page=${page}&per_page=${perPage}${policy}`;
    const response = await fetch(url, { headers: { Authorization: `Bearer ${apiKey}` } });
    const body = await response.text();
    if (response.status !== 200) throw new Error(`${url}: ${response.status} ${body.slice(0, 300)}`);
    const json = JSON.parse(body) as { total: number; records: Record<string, string>[] };
    const volume = endpoint === "policy_impact" ? "Stopped" : "Volume";
    return { total: json.total, keys: json.records.map((r) => `${r.Domain}|${r.Service}=${r[volume]}`) };
  };

  log(
    `\n${label}\n${"endpoint".padEnd(20)}${"period".padEnd(7)}${"page".padEnd(11)}${"API p50".padStart(9)}${"API p95".padStart(9)}${"base p50".padStart(9)}${"base p95".padStart(9)}${"×p95".padStart(7)}  (ms)`,
  );
  const verdicts: string[] = [];
  for (const endpoint of ["aggregate_by_sender", "policy_impact"]) {
    for (const [period, start] of [
      ["30d", yearEnd + 1 - 30 * DAY],
      ["365d", yearEnd + 1 - 365 * DAY],
    ] as const) {
      const first = await call(endpoint, start, yearEnd, 1);
      const last = Math.max(1, Math.ceil(first.total / perPage));
      for (const page of [...new Set([1, last])]) {
        const api = await call(endpoint, start, yearEnd, page);
        const base = await baseline(endpoint, start, yearEnd, page);
        const same = api.total === base.total && JSON.stringify(api.keys) === JSON.stringify(base.keys);
        if (!same) {
          mismatches += 1;
          log(
            `!!! MISMATCH ${endpoint} ${period} page ${page}: ${api.total} vs ${base.total}; ${api.keys[0]} vs ${base.keys[0]}`,
          );
        }
        const apiTimes: number[] = [];
        const baseTimes: number[] = [];
        for (let i = 0; i < reps; i++) {
          let t0 = performance.now();
          await call(endpoint, start, yearEnd, page);
          apiTimes.push(performance.now() - t0);
          t0 = performance.now();
          await baseline(endpoint, start, yearEnd, page);
          baseTimes.push(performance.now() - t0);
        }
        apiTimes.sort((a, b) => a - b);
        baseTimes.sort((a, b) => a - b);
        const a95 = quantile(apiTimes, 0.95);
        const b95 = quantile(baseTimes, 0.95);
        log(
          `${endpoint.padEnd(20)}${period.padEnd(7)}${(page === 1 ? "1" : `${page} (last)`).padEnd(11)}` +
            `${quantile(apiTimes, 0.5).toFixed(1).padStart(9)}${a95.toFixed(1).padStart(9)}` +
            `${quantile(baseTimes, 0.5).toFixed(1).padStart(9)}${b95.toFixed(1).padStart(9)}${(b95 / a95).toFixed(2).padStart(7)}${same ? "" : "  MISMATCH"}`,
        );
        if (period === "365d")
          verdicts.push(
            `${label}: p95 ≤ ${p95TargetMs} ms, ${endpoint} 365d page ${page}: ${a95.toFixed(1)} ms: target ${a95 <= p95TargetMs ? "met" : "MISSED"}${same ? "" : " (MISMATCH)"}`,
          );
      }
    }
  }
  return verdicts;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
