import { catchUp } from "@dmarc-ledger/projection-engine";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports } from "../../../test/support/aggregate-report.js";
import { type Backend, backends } from "../../../test/support/service-harness.js";
import { rankingMaintenanceFromEnv, startRankingMaintenance } from "../src/ranking-maintenance.js";

const meta = { causedBy: "test" };

describe.each(backends)("ranking upkeep beside the projector on %s", (_name, openBackend) => {
  let backend: Backend;
  let runtime: Runtime;

  beforeAll(async () => {
    backend = await openBackend();
    runtime = await openRuntime(backend.env);
    const { tenantId } = await createTenant(runtime.store, { name: "t", region: "global" }, meta);
    await addDomain(runtime.store, { tenantId, domain: "upkeep.com" }, meta);
    const begin = Date.UTC(2026, 2, 3) / 1000;
    const rows = Array.from({ length: 30 }, (_, i) => ({
      sourceIp: `203.0.113.${i}`,
      count: i + 1,
      disposition: "none",
      // Every third source fails both: DMARC fails for 10 of the 30.
      policyDkim: i % 3 ? "pass" : "fail",
      policySpf: i % 3 ? "pass" : "fail",
    }));
    const payload = aggregateReport({
      identity: "upkeep-1",
      domain: "upkeep.com",
      organization: "google.com",
      begin,
      end: begin + 86_399,
      rows,
    });
    await appendAggregateReports(runtime.store, [payload]);
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
  });

  afterAll(async () => {
    await runtime?.close();
    await backend?.cleanup();
  });

  it("builds the rankings of the month, the year and the last 30 and 365 days on its own, and stops cleanly", async () => {
    const upkeep = startRankingMaintenance({
      db: runtime.db,
      logger: pino({ level: "silent" }),
      intervalMs: 20,
      // The report is of March 3rd: on March 20th it is also in the last 30 and 365 days.
      rankings: { minFacts: 10, now: Date.UTC(2026, 2, 20) / 1000 },
    });
    const deadline = Date.now() + 20_000;
    let builds: { scope: string; group_count: string | number }[] = [];
    while (builds.length < 8 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      builds = await runtime.db.selectFrom("source_ranking_build").select(["scope", "group_count"]).execute();
    }
    await upkeep.stop();
    // March, 2026, the last 30 and the last 365 days, for both scopes.
    expect(builds.map((b) => `${b.scope}:${b.group_count}`).sort()).toEqual([
      ...Array(4).fill("all:30"),
      ...Array(4).fill("unaligned:10"),
    ]);
  });

  it("reads its settings from the environment and refuses nonsense", () => {
    expect(rankingMaintenanceFromEnv({})).toEqual({
      intervalMs: 60_000,
      rankings: { minFacts: 20_000, statementTimeoutMs: 300_000 },
    });
    expect(
      rankingMaintenanceFromEnv({
        RANKING_INTERVAL_MS: "500",
        RANKING_MIN_FACTS: "7",
        RANKING_STATEMENT_TIMEOUT_MS: "0",
      }),
    ).toEqual({
      intervalMs: 500,
      rankings: { minFacts: 7, statementTimeoutMs: 0 },
    });
    expect(() => rankingMaintenanceFromEnv({ RANKING_MIN_FACTS: "-1" })).toThrow(/RANKING_MIN_FACTS/);
  });
});
