/**
 * Issue 26, aggregate retention: what an AggregateFactsExpired costs the projector, rankings
 * included. A tenant of BENCH_ROWS aggregate report rows (default 1,000,000) over 2025, on
 * PostgreSQL, projected, every by-source ranking built (calendar months and years, the last 30
 * and 365 days); then, as the retention job would meet them:
 * - the daily run: the facts of the first day expire (one day of each ranking that holds it);
 * - a first run after the policy is set: the next 90 days expire at once.
 * Each is the projection of the one event (catchUp: the facts, the counts and every ranking they
 * reach, in one transaction) and the count the job makes before appending it. The baseline, in
 * the same run: building the tenant's rankings from scratch, what dropping and rebuilding the
 * affected rankings would cost instead.
 */
import { createTestDatabase } from "@dmarc-ledger/db/testing";
import { newEvent, streams } from "@dmarc-ledger/events";
import { catchUp } from "@dmarc-ledger/projection-engine";
import {
  countExpiringFacts,
  maintainSourceRankings,
  tenantReportDomainNames,
} from "@dmarc-ledger/report-read-models";
import { openRuntime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import pg from "pg";
import { DAY, scaleFor, yearEnd, yearStart } from "./reporting-api/generate.js";
import { seedTenant } from "./reporting-api/seed.js";

const rows = Number(process.env.BENCH_ROWS ?? 1_000_000);
const log = (line: string) => console.log(line);
const progress = (line: string) => process.stderr.write(`  … ${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const dayOf = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);

async function main(): Promise<void> {
  const scale = scaleFor(rows);
  log(`tenant: ${scale.rows.toLocaleString("en")} rows, ${scale.domains} domains`);
  const database = await createTestDatabase("dl_agg_retention");
  const runtime = await openRuntime(
    {},
    { database: { kind: "postgres", url: database.url }, eventStoreUrl: null },
  );
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const now = yearEnd + 1 + 3600;
  try {
    const tenant = await seedTenant(runtime, scale, { progress });
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    await client.query("vacuum analyze");
    const buildStarted = performance.now();
    const built = await maintainSourceRankings(runtime.db, { now });
    const buildMs = performance.now() - buildStarted;
    const count = async (table: string) =>
      Number((await client.query<{ n: string }>(`select count(*)::text as n from ${table}`)).rows[0]!.n);
    log(
      `baseline: ${built.length} rankings built from scratch in ${seconds(buildMs)} (${(await count("source_ranking")).toLocaleString("en")} ranking rows, ${(await count("agg_source")).toLocaleString("en")} agg_source rows)`,
    );
    const domains = (await tenantReportDomainNames(runtime.db, tenant.tenantId)).sort();

    for (const [label, before] of [
      ["daily run: the first day", dayOf(yearStart + DAY)],
      ["first run: the next 90 days", dayOf(yearStart + 91 * DAY)],
    ] as const) {
      const countStarted = performance.now();
      const removed = await countExpiringFacts(runtime.db, domains, before);
      const countMs = performance.now() - countStarted;
      await runtime.store.append(
        streams.personalData(tenant.tenantId),
        [
          newEvent(
            "AggregateFactsExpired",
            { tenantId: tenant.tenantId, before, domains, removed },
            { causedBy: "bench" },
          ),
        ],
        "any",
      );
      const rankings = await count("source_ranking_build");
      const started = performance.now();
      await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
      const ms = performance.now() - started;
      const rowsGone = Object.values(removed.rows).reduce((sum, n) => sum + n, 0);
      log(
        `${label} (before ${before}): ${removed.messages.toLocaleString("en")} messages, ${rowsGone.toLocaleString("en")} rows (agg_source ${removed.rows.agg_source!.toLocaleString("en")}); ` +
          `counted in ${seconds(countMs)}, projected in ${seconds(ms)} (${((ms / buildMs) * 100).toFixed(1)}% of the baseline); rankings ${rankings} → ${await count("source_ranking_build")}`,
      );
      const upkeepStarted = performance.now();
      const after = await maintainSourceRankings(runtime.db, { now });
      log(
        `  the upkeep round after it: ${after.length} rankings built or caught up, in ${seconds(performance.now() - upkeepStarted)}`,
      );
    }
  } finally {
    await client.end();
    await runtime.close();
    await database.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
