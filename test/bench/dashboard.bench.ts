/**
 * Issue #24, "Fast": each dashboard view's API requests, replayed as the browser sends them (at
 * once, with the session cookie), over a tenant of BENCH_ROWS aggregate report rows (default
 * 10,000,000; the reporting-api bench's dataset) and one archived input per report. Prints p50
 * and p95 of each view's load, over a 30-day and a 365-day period, against the target of
 * p95 ≤ 300 ms, and against a baseline measured in the same run: the smallest authenticated
 * request (GET /api/session). `BENCH_ROWS=200000 pnpm bench dashboard` for a quick run.
 * `BENCH_KEEP_DB=1` keeps the loaded database and prints its name; `BENCH_DATABASE=<name>` measures
 * again over it without loading (new read models are projected first), e.g. after a change to a
 * query: at 10M rows the load is most of the run.
 */

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startService } from "@dmarc-ledger/cli";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { catchUp } from "@dmarc-ledger/projection-engine";
import { openRuntime, runtimeDataKeys } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addUser, setPassword, type UsersSchema } from "@dmarc-ledger/users";
import type { Kysely } from "kysely";
import pg from "pg";
import { pino } from "pino";
import { testMasterKey } from "../support/master-key.js";
import { DAY, domainName, scaleFor, yearEnd } from "./reporting-api/generate.js";
import { keptDatabase } from "./reporting-api/kept-database.js";
import { seedFailureReports, seedTenant } from "./reporting-api/seed.js";
import { skipAlertEvaluationOfLoad, upkeepRound } from "./reporting-api/service-at-rest.js";
import { nameAtFirstSight, seedApprovals, seedSourceNames } from "./reporting-api/source-names.js";

const rows = Number(process.env.BENCH_ROWS ?? 10_000_000);
const reps = Number(process.env.BENCH_REPS ?? 20);
const p95TargetMs = 300;
const log = (line: string) => console.log(line);
const progress = (line: string) => process.stderr.write(`  … ${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const quantile = (sorted: number[], q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;

interface Period {
  label: string;
  start: number;
  end: number;
}

/**
 * What each view asks when it opens with all domains (apps/web/src/views): the domain list of
 * the filter, and its own requests. The onboarding check is left out: it asks live DNS.
 */
function viewRequests(period: Period, arrival: Period, busiest: string): Record<string, string[]> {
  const p = `start=${period.start}&end=${period.end}`;
  const length = period.end - period.start + 1;
  const before = `start=${period.start - length}&end=${period.start - 1}`;
  const domains = "domains?per_page=1000";
  return {
    overview: [
      domains,
      `aggregate_by_domain?${p}&per_page=1000`,
      `aggregate_by_domain?${before}&per_page=1000`,
      `aggregate_by_unaligned_source?${p}&per_page=10`,
      // The volume over time: periods of up to 1,000 days by day.
      `aggregate_by_date?${p}&bucket=day&per_page=1000`,
    ],
    // Senders opens on its Services tab; Sources and Unaligned sources are its other tabs.
    senders: [domains, `aggregate_by_sender?${p}&per_page=1000`],
    "senders, one domain": [domains, `aggregate_by_sender?${p}&per_page=1000&domain=${busiest}`],
    "senders, sources": [domains, `aggregate_by_source?${p}&per_page=1000`],
    "senders, unaligned": [domains, `aggregate_by_unaligned_source?${p}&per_page=1000`],
    policy: [domains, `policy_impact?${p}&policy=reject&per_page=1000`],
    reporters: [domains, `aggregate_by_organization?${p}&per_page=1000`],
    "failure reports": [domains, `forensic?${p}&per_page=1000`],
    domains: [domains, `safe_spf?domain=${busiest}`, `history?domain=${busiest}&per_page=1000`],
    intake: [domains, `inputs?start=${arrival.start}&end=${arrival.end}&per_page=1000`],
    settings: ["session", "users", "api_keys", "activity?per_page=1000"],
  };
}

async function main(): Promise<void> {
  const scale = scaleFor(rows);
  log(
    `scale: ${scale.rows.toLocaleString("en")} rows, ${scale.domains} domains, ${scale.sourceIps.toLocaleString("en")} source IPs, ${scale.forensic} failure reports, 365 days`,
  );
  const kept = process.env.BENCH_DATABASE;
  const database: TestDatabase = kept
    ? keptDatabase(kept, "dl_bench_web")
    : await createTestDatabase("dl_bench_web");
  // A kept database's data keys are wrapped by the master key of the run that loaded it, kept
  // beside it (readable by its owner only), for the runs that measure it again.
  const keyFile = join(tmpdir(), `${new URL(database.url).pathname.slice(1)}.master-key`);
  const masterKey = kept && existsSync(keyFile) ? readFileSync(keyFile, "utf8").trim() : testMasterKey;
  const runtime = await openRuntime(
    {},
    { database: { kind: "postgres", url: database.url }, eventStoreUrl: null },
  );
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  let service: Awaited<ReturnType<typeof startService>> | null = null;
  const password = "the bench's long password";
  const now = Math.floor(Date.now() / 1000);
  try {
    const loadStarted = performance.now();
    if (kept) {
      // Read models added since the load are projected here; the rankings caught up.
      await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
      const rankings = (await upkeepRound(runtime.db, yearEnd)).summary;
      await client.query("vacuum analyze");
      log(`measured again over ${kept} (${rankings}) after ${seconds(performance.now() - loadStarted)}`);
    } else {
      const ips = new Set<string>();
      const tenant = await seedTenant(runtime, scale, { progress, onRow: (row) => ips.add(row.sourceIp) });
      const { generator, reports } = tenant;
      await seedFailureReports(runtime, generator, scale.forensic);
      await seedSourceNames(runtime, ips);
      // The rest named as the service names a new source, before it starts: not beside the views.
      await nameAtFirstSight(runtime);
      await seedApprovals(runtime, tenant.tenantId, scale.domains);
      const people = runtime.db as unknown as Kysely<UsersSchema>;
      const keys = await runtimeDataKeys(runtime, { DATABASE_URL: database.url, MASTER_KEY: masterKey });
      const admin = await addUser(
        runtime.store,
        people,
        keys,
        { tenantId: tenant.tenantId, email: "admin@bench.example", role: "admin", linkTtlMs: 3_600_000 },
        { causedBy: "bench" },
      );
      await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
      await setPassword(runtime.store, people, keys, { token: admin.link.token, password }, {});
      await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
      const rankings = (await upkeepRound(runtime.db, yearEnd)).summary;

      // One archived input per report, arriving over the year before the load (the archive is the
      // intake's; its rows are written here as the intake would, without parsing anything again).
      await client.query(
        `insert into raw_input (sha256, size, compression, content, channel, source, status, items,
           times_received, first_seen, last_seen, processed_at)
         select encode(sha256(i::text::bytea), 'hex'), 2048, null, null, 'smtp', 'smtp:bench', 'stored',
           json_build_array(json_build_object('kind', 'aggregate', 'identity', md5(i::text),
             'domain', 'bench-' || lpad((i % $2)::text, 4, '0') || '.com', 'rows', 100, 'messages', 1000,
             'status', 'stored'))::text,
           1, to_timestamp($3 - (i % 365) * 86400 - i % 86400), to_timestamp($3 - (i % 365) * 86400 - i % 86400),
           to_timestamp($3 - (i % 365) * 86400 - i % 86400)
         from generate_series(1, $1::int) as i`,
        [reports, scale.domains, now],
      );
      await client.query(
        `insert into raw_input_domain (domain, sha256)
         select lower(item->>'domain'), sha256 from raw_input, jsonb_array_elements(items::jsonb) as item`,
      );
      await client.query("vacuum analyze");
      await client.query("checkpoint");
      log(
        `loaded ${reports.toLocaleString("en")} reports (${generator.rowsProduced.toLocaleString("en")} rows), ` +
          `${ips.size.toLocaleString("en")} source IPs named, ` +
          `${rankings} and ${reports.toLocaleString("en")} archived inputs in ${seconds(performance.now() - loadStarted)}`,
      );
    }

    const skipped = await skipAlertEvaluationOfLoad(runtime);
    log(
      `the alert evaluator moved past the ${skipped.toLocaleString("en")} loaded aggregate reports unevaluated (skipAlertEvaluationOfLoad says why)`,
    );
    service = await startService({
      runtime,
      env: {
        RATE_LIMIT_PER_SECOND: "100000",
        RATE_LIMIT_BURST: "100000",
        // Every request answered by its query: the answer cache would serve the repeats of a view.
        API_ANSWER_CACHE_BYTES: "0",
        MASTER_KEY: masterKey,
        // Reverse DNS of the bench's addresses would run beside the timed views.
        SOURCE_IP_RESOLVER: "off",
        // The bench ran the upkeep itself, around its data's last day; the service's, around
        // today, would build other rankings beside the timed views.
        RANKING_INTERVAL_MS: String(86_400_000),
      },
      port: 0,
      logger: pino({ level: "silent" }),
      bootstrapTenant: false,
    });
    const apiRoot = service.apiRoot;
    const signIn = await fetch(`${apiRoot}sign_in`, {
      method: "PUT",
      body: new URLSearchParams({ email: "admin@bench.example", password }),
    });
    if (signIn.status !== 200) throw new Error(`sign-in: ${signIn.status} ${await signIn.text()}`);
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    const get = async (path: string) => {
      const response = await fetch(`${apiRoot}${path}`, { headers: { Cookie: cookie } });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${path}: ${response.status} ${body.slice(0, 300)}`);
      return body;
    };
    const timed = async (work: () => Promise<unknown>, count: number) => {
      const times: number[] = [];
      for (let i = 0; i < count; i++) {
        const t0 = performance.now();
        await work();
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      return { p50: quantile(times, 0.5), p95: quantile(times, 0.95) };
    };

    const baseline = await timed(() => get("session"), Math.max(reps, 50));
    log(`baseline: GET /api/session p50 ${baseline.p50.toFixed(1)} ms, p95 ${baseline.p95.toFixed(1)} ms`);

    const periods: Period[] = [
      { label: "30d", start: yearEnd + 1 - 30 * DAY, end: yearEnd },
      { label: "365d", start: yearEnd + 1 - 365 * DAY, end: yearEnd },
    ];
    const arrivals: Record<string, Period> = {
      "30d": { label: "30d", start: now - 30 * DAY, end: now },
      "365d": { label: "365d", start: now - 365 * DAY, end: now },
    };
    const results: { view: string; period: string; requests: number; p50: number; p95: number }[] = [];
    for (const period of periods) {
      for (const [view, paths] of Object.entries(
        viewRequests(period, arrivals[period.label]!, domainName(0)),
      )) {
        // As the browser opens the view: every request at once. The first load warms plans up.
        const load = () => Promise.all(paths.map(get));
        await load();
        const figures = await timed(load, reps);
        results.push({ view, period: period.label, requests: paths.length, ...figures });
        progress(`${view} ${period.label}: p95 ${figures.p95.toFixed(1)} ms`);
      }
    }

    const ms = (v: number) => v.toFixed(1).padStart(9);
    log(
      `\n${"view".padEnd(22)}${"period".padEnd(8)}${"requests".padStart(9)}${"p50".padStart(9)}${"p95".padStart(9)}${"×base p95".padStart(11)}  (ms)`,
    );
    for (const r of results) {
      log(
        `${r.view.padEnd(22)}${r.period.padEnd(8)}${String(r.requests).padStart(9)}${ms(r.p50)}${ms(r.p95)}${(r.p95 / baseline.p95).toFixed(1).padStart(11)}`,
      );
    }
    log("");
    for (const r of results) {
      log(
        `p95 ≤ ${p95TargetMs} ms, ${r.view} ${r.period}: ${r.p95.toFixed(1)} ms: target ${r.p95 <= p95TargetMs ? "met" : "MISSED"}`,
      );
    }
  } finally {
    await service?.stop();
    await client.end();
    await runtime.close();
    if (process.env.BENCH_KEEP_DB || kept) {
      writeFileSync(keyFile, masterKey, { mode: 0o600 });
      log(`kept database ${database.url} (its MASTER_KEY in ${keyFile})`);
    } else await database.drop();
  }
}

await main();
