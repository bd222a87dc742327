/**
 * Issue 21, point 3: the by-source rankings' upkeep, in proportion to what changed. A tenant of
 * BENCH_ROWS aggregate report rows (default 10,000,000) over 2025, on PostgreSQL; then, as the
 * projector's upkeep would meet them:
 * - the first build of every ranking (time, ranking rows, size, against the facts' size);
 * - a day of small reports (UPKEEP_SMALL_REPORTS, default 9,009, of 20 rows, for the last day) and
 *   the upkeep round after it;
 * - the next day (the last 30 and 365 days move on) and the round after it;
 * - a round with nothing changed.
 * The baseline, in the same run: one plain GROUP BY of the tenant's facts over the year, what
 * building one year's ranking from scratch costs. The issue measured, before: 13.8 million
 * ranking rows (5.1 GB, against 1.5 GB of facts) built in 175 s at 10M rows, and an upkeep query
 * that ran for more than 10 minutes after 9,009 small reports.
 * `BENCH_ROWS=1000000 pnpm bench ranking-upkeep` for a quicker run.
 */
import { createTestDatabase } from "@dmarc-ledger/db/testing";
import { newEvent, streams } from "@dmarc-ledger/events";
import { catchUp } from "@dmarc-ledger/projection-engine";
import { maintainSourceRankings, type RankingBuilt } from "@dmarc-ledger/report-read-models";
import { openRuntime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import pg from "pg";
import { DAY, scaleFor, TrafficGenerator, yearEnd } from "./reporting-api/generate.js";
import { inParallel, seedTenant } from "./reporting-api/seed.js";

const rows = Number(process.env.BENCH_ROWS ?? 10_000_000);
const smallReports = Number(process.env.UPKEEP_SMALL_REPORTS ?? 9_009);
const smallRows = 20;
const before = { rankingRows: 13_800_000, rankingGb: 5.1, factsGb: 1.5, buildS: 175, slowRoundS: 600 };

const log = (line: string) => console.log(line);
const progress = (line: string) => process.stderr.write(`  … ${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function summary(done: RankingBuilt[]): string {
  if (process.env.UPKEEP_VERBOSE)
    for (const r of done)
      progress(
        `${r.outcome} ${r.kind} ${r.scope} ${new Date(r.bucket.start * 1000).toISOString().slice(0, 10)}..${new Date(r.bucket.end * 1000).toISOString().slice(0, 10)}: ${r.groups} groups, ${seconds(r.ms)}`,
      );
  const built = done.filter((r) => r.outcome === "built");
  const refreshed = done.filter((r) => r.outcome !== "built");
  const groups = (list: RankingBuilt[]) => list.reduce((sum, r) => sum + r.groups, 0).toLocaleString("en");
  return `${built.length} built (${groups(built)} groups), ${refreshed.length} refreshed or moved (${groups(refreshed)} groups summed again)`;
}

async function main(): Promise<void> {
  const scale = scaleFor(rows);
  log(
    `tenant: ${scale.rows.toLocaleString("en")} rows, ${scale.domains} domains, ${scale.sourceIps.toLocaleString("en")} source IPs`,
  );
  const database = await createTestDatabase("dl_upkeep");
  const runtime = await openRuntime(
    {},
    { database: { kind: "postgres", url: database.url }, eventStoreUrl: null },
  );
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  // The day after the data: its last 30 and 365 days are December and the whole of 2025.
  const now = yearEnd + 1 + 3600;
  try {
    const tenant = await seedTenant(runtime, scale, { progress });
    const projected = performance.now();
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    log(
      `projected ${tenant.generator.rowsProduced.toLocaleString("en")} rows in ${seconds(performance.now() - projected)}`,
    );
    await client.query("vacuum analyze");

    // The baseline: the tenant's facts over the year grouped once, as a year's ranking build does.
    const baselineStarted = performance.now();
    const { rows: grouped } = await client.query<{ n: string }>(
      `select count(*)::text as n from (select domain, source_ip, organization, sum(volume)
       from agg_source where t between $1 and $2 group by 1, 2, 3) g`,
      [yearEnd + 1 - 365 * DAY, yearEnd],
    );
    const baselineMs = performance.now() - baselineStarted;
    log(
      `baseline: one GROUP BY of the year's facts (${Number(grouped[0]!.n).toLocaleString("en")} groups) in ${seconds(baselineMs)}`,
    );

    const buildStarted = performance.now();
    const built = await maintainSourceRankings(runtime.db, { now });
    const buildMs = performance.now() - buildStarted;
    const sizes = await client.query<{ name: string; n: string; bytes: string }>(
      `select relname as name, n_live_tup::text as n, pg_total_relation_size(relid)::text as bytes
       from pg_stat_user_tables where relname in ('agg_source', 'source_ranking')`,
    );
    await client.query("analyze source_ranking");
    const size = (name: string) => sizes.rows.find((row) => row.name === name);
    const { rows: counted } = await client.query<{ n: string }>(
      "select count(*)::text as n from source_ranking",
    );
    const rankingRows = Number(counted[0]!.n);
    const rankingGb = Number(size("source_ranking")?.bytes ?? 0) / 1e9;
    const factsGb = Number(size("agg_source")?.bytes ?? 0) / 1e9;
    log(
      `first build: ${summary(built)} in ${seconds(buildMs)} (${(buildMs / baselineMs).toFixed(1)}× the baseline); ` +
        `${rankingRows.toLocaleString("en")} ranking rows, ${rankingGb.toFixed(2)} GB, against ${factsGb.toFixed(2)} GB of facts ` +
        `(${(rankingGb / factsGb).toFixed(2)}×; before: ${(before.rankingGb / before.factsGb).toFixed(2)}× at 10M rows, ${before.rankingRows.toLocaleString("en")} rows in ${before.buildS} s)`,
    );

    // A day of small reports for the data's last day, projected, then one round.
    const small = new TrafficGenerator(
      { ...scale, rows: smallReports * smallRows },
      { seed: 7, prefix: "small" },
    );
    await inParallel(
      () => small.next(() => {}, { day: 364, rows: smallRows }),
      6,
      async (report) => {
        await runtime.store.append(
          streams.aggregateReport(report.payload.identity),
          [newEvent("AggregateReportReceived", report.payload, { causedBy: "bench" })],
          "no_stream",
        );
      },
    );
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    const afterSmallStarted = performance.now();
    const afterSmall = await maintainSourceRankings(runtime.db, { now });
    const afterSmallMs = performance.now() - afterSmallStarted;
    log(
      `round after ${smallReports.toLocaleString("en")} small reports (${(smallReports * smallRows).toLocaleString("en")} rows): ` +
        `${summary(afterSmall)} in ${seconds(afterSmallMs)} (${(afterSmallMs / baselineMs).toFixed(2)}× the baseline; before: over ${before.slowRoundS} s)`,
    );

    const nextDayStarted = performance.now();
    const nextDay = await maintainSourceRankings(runtime.db, { now: now + DAY });
    const nextDayMs = performance.now() - nextDayStarted;
    log(
      `round on the next day (the last 30 and 365 days move on): ${summary(nextDay)} in ${seconds(nextDayMs)} (${(nextDayMs / baselineMs).toFixed(2)}× the baseline)`,
    );

    const idleStarted = performance.now();
    const idle = await maintainSourceRankings(runtime.db, { now: now + DAY });
    log(`round with nothing changed: ${summary(idle)} in ${seconds(performance.now() - idleStarted)}`);
  } finally {
    await client.end();
    await runtime.close();
    if (process.env.BENCH_KEEP_DB) log(`kept database ${database.url}`);
    else await database.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
