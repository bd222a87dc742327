/**
 * The by-source endpoints answer from calendar rankings when one is close to the period. These
 * tests hold them to the plain grouping of the facts: the same records and totals, page by page,
 * for periods on and off the calendar, after facts changed behind a ranking, and after the tenant
 * gained a domain.
 */
import { newEvent, streams } from "@dmarc-ledger/events";
import { applyBatchWithin, catchUp } from "@dmarc-ledger/projection-engine";
import {
  aggregateBySource,
  aggregateByUnalignedSource,
  chooseRanking,
  type PageQuery,
} from "@dmarc-ledger/queries";
import { maintainSourceRankings, tenantReportDomains } from "@dmarc-ledger/report-read-models";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant, removeDomain } from "@dmarc-ledger/tenancy";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports } from "../../support/aggregate-report.js";
import { prng } from "../../support/prng.js";
import { type Backend, postgresBackend } from "../../support/service-harness.js";

const meta = { causedBy: "test" };
const DAY = 86_400;
/** 2025-11-01T00:00:00Z: the traffic covers November 2025 to January 2026. */
const novemberFirst = Date.UTC(2025, 10, 1) / 1000;
const decemberFirst = Date.UTC(2025, 11, 1) / 1000;
const januaryFirst = Date.UTC(2026, 0, 1) / 1000;
const februaryFirst = Date.UTC(2026, 1, 1) / 1000;
const januaryTwentiethNoon = Date.UTC(2026, 0, 20, 12) / 1000;

const pick = <T>(random: () => number, values: readonly T[]) => values[Math.floor(random() * values.length)]!;

/** A report about `domain`: skewed sources, mixed results; some span days, some start mid-day. */
function report(index: number, domain: string, random: () => number) {
  const day = Math.floor(random() * 92);
  const begin = novemberFirst + day * DAY + (index % 4 === 0 ? Math.floor(random() * DAY) : 0);
  const end = index % 7 === 0 ? begin + 3 * DAY - 1 : begin + DAY - 1;
  const rows = Array.from({ length: 5 + Math.floor(random() * 40) }, () => {
    const sender = Math.floor(random() ** 3 * 120);
    const aligned = random() < 0.6;
    return {
      sourceIp: `192.0.2.${sender}`,
      count: 1 + Math.floor(random() * (sender < 10 ? 500 : 20)),
      disposition: aligned ? "none" : pick(random, ["none", "quarantine", "reject"]),
      policyDkim: aligned && random() < 0.9 ? "pass" : "fail",
      policySpf: aligned ? "pass" : "fail",
      arc: aligned ? null : pick(random, [null, "pass", "fail"] as const),
      dkim: [
        { domain: pick(random, [domain, "esp.example"]), selector: "s", result: "pass", humanResult: null },
      ],
      spf: [{ domain: pick(random, [domain, "bounce.example"]), scope: "mfrom", result: "fail" }],
    };
  });
  const organization = pick(random, ["google.com", "outlook.com", "yahoo.com", "reporter.example"]);
  return aggregateReport({
    identity: `rank-${domain}-${index}`,
    domain,
    organization,
    begin,
    end,
    rows,
    policy: "reject",
  });
}

const periods = [
  { label: "December", start: decemberFirst, end: januaryFirst - 1 },
  { label: "December without its first day", start: decemberFirst + DAY, end: januaryFirst - 1 },
  { label: "December without its last two days", start: decemberFirst, end: januaryFirst - 2 * DAY - 1 },
  { label: "December without both ends", start: decemberFirst + 2 * DAY, end: januaryFirst - 3 * DAY - 1 },
  { label: "December and a day either side", start: decemberFirst - DAY, end: januaryFirst + DAY - 1 },
  { label: "30 days into January", start: decemberFirst + 5 * DAY, end: decemberFirst + 35 * DAY - 1 },
  { label: "2025", start: Date.UTC(2025, 0, 1) / 1000, end: januaryFirst - 1 },
  { label: "to the second", start: decemberFirst + 3 * DAY + 4321, end: januaryFirst + 2 * DAY + 77 },
  { label: "three months", start: novemberFirst, end: februaryFirst - 1 },
  { label: "a quiet year", start: Date.UTC(2030, 0, 1) / 1000, end: Date.UTC(2031, 0, 1) / 1000 - 1 },
  {
    label: "the last 30 days, on January 20th",
    start: januaryTwentiethNoon - 30 * DAY,
    end: januaryTwentiethNoon,
  },
];

/** Which pages of a list of `lastPage` pages to compare (those below 1 are left out). */
export type PagesToCompare = (lastPage: number) => number[];

/**
 * The first page, the second, the middle and the last two (walked from the bottom: see
 * rankedSourcePage) and one past the end.
 */
export const pagesAtEveryPosition: PagesToCompare = (lastPage) => [
  1,
  2,
  Math.ceil(lastPage / 2),
  lastPage - 1,
  lastPage,
  lastPage + 1,
];

/**
 * One page a walk, each at an offset: the second (from the top) and the one before last (from the
 * bottom). Beside the whole list, which holds every record, enough to show where a backend
 * answers the same statements differently (the positions in between are the same statements
 * with other numbers), for a backend where each request costs more (PGlite).
 */
export const pagesOnEachWalk: PagesToCompare = (lastPage) => [2, lastPage - 1];

/**
 * The pages of both endpoints for every period, and the whole list at once: the ranking's answer
 * against the grouping's. The grouping is asked once per period, for the whole list, and its pages
 * are cut from that list, so that the reference costs one query where it cost one a page.
 */
const expectSameAsGrouping = async (db: Runtime["db"], tenantId: string, pagesToCompare: PagesToCompare) => {
  let ranked = 0;
  for (const endpoint of [aggregateBySource, aggregateByUnalignedSource]) {
    for (const period of periods) {
      const base: PageQuery = { tenantId, start: period.start, end: period.end, page: 1, perPage: 9 };
      const { total } = await endpoint(db, { ...base, perPage: 1 }, { ignoreRankings: true });
      const everything = { ...base, perPage: Math.max(1, total) };
      const grouped = await endpoint(db, everything, { ignoreRankings: true });
      expect(grouped.total).toBe(total);
      const lastPage = Math.ceil(total / 9);
      for (const page of new Set(pagesToCompare(lastPage))) {
        if (page < 1) continue;
        const expected = { total, records: grouped.records.slice((page - 1) * 9, page * 9) };
        const actual = await endpoint(db, { ...base, page });
        expect(actual, `${endpoint.name} ${period.label} page ${page}`).toEqual(expected);
      }
      // And every group at once: a wrong sum far from the pages above shows here.
      expect(await endpoint(db, everything), `${endpoint.name} ${period.label} whole list`).toEqual(grouped);
      const scope = endpoint === aggregateBySource ? "all" : "unaligned";
      if (await chooseRanking(db, base, scope)) ranked++;
    }
  }
  return ranked;
};

/**
 * Every ranking of the tenant holds what a build of its bucket from scratch would: the sums and
 * fact counts of every group, and the first and last second of its facts (kept as offsets from
 * the ranking's anchor), however it got there (built, caught up, moved on, domains gained).
 * Returns how many rankings were compared.
 */
export const expectRankingsAsBuilt = async (db: Runtime["db"], tenantId: string): Promise<number> => {
  const domains = (await tenantReportDomains(db, tenantId)).map((d) => d.domain);
  const { rows: builds } = await sql<{
    ranking_id: string;
    scope: string;
    bucket_start: string;
    bucket_end: string;
    group_count: string;
  }>`select ranking_id::text, scope, bucket_start::text, bucket_end::text, group_count::text
    from source_ranking_build where tenant_id = ${tenantId}`.execute(db);
  for (const build of builds) {
    const { rows: actual } = await sql<{ line: string }>`
      select concat_ws('|', r.domain, r.source_ip, r.organization, r.volume, r.dmarc_pass, r.unaligned_arc_pass,
        r.dkim_aligned, r.spf_aligned, r.dkim_pass, r.spf_pass, r.facts, b.anchor_start + r.start_offset,
        b.anchor_end - r.end_offset) as line
      from source_ranking r join source_ranking_build b on b.ranking_id = r.ranking_id
      where r.ranking_id = ${build.ranking_id}::bigint order by 1`.execute(db);
    const { rows: expected } = await sql<{ line: string }>`
      select concat_ws('|', domain, source_ip, organization, sum(volume),
        coalesce(sum(volume) filter (where dmarc_pass), 0), sum(unaligned_arc_pass), sum(dkim_aligned),
        sum(spf_aligned), sum(dkim_pass), sum(spf_pass), count(*), min(t), max(t)) as line
      from agg_source
      where domain = any(${domains}::text[]) and t between ${build.bucket_start}::bigint and ${build.bucket_end}::bigint
        ${build.scope === "unaligned" ? sql`and not dmarc_pass` : sql``}
      group by domain, source_ip, organization order by 1`.execute(db);
    expect(
      actual.map((r) => r.line),
      `ranking ${build.ranking_id} (${build.scope}, ${build.bucket_start})`,
    ).toEqual(expected.map((r) => r.line));
    expect(Number(build.group_count)).toBe(expected.length);
  }
  return builds.length;
};

/**
 * The cases on one backend; each backend has a test file of its own, so the two run side by side.
 * Each case compares the pages that `pagesToCompare` names, and every whole list.
 */
export function rankingCases(openBackend: () => Promise<Backend>, pagesToCompare: PagesToCompare): void {
  const expectSame = (db: Runtime["db"], tenantId: string) =>
    expectSameAsGrouping(db, tenantId, pagesToCompare);
  describe("by-source pages from calendar rankings", () => {
    let backend: Backend;
    let runtime: Runtime;
    let tenantA: string;
    /** A page of tenant A's by-source records over December, the period a ranking covers. */
    const decemberPageOfA = () => ({
      tenantId: tenantA,
      start: decemberFirst,
      end: januaryFirst - 1,
      page: 1,
      perPage: 9,
    });
    let tenantB: string;
    const random = prng(7);
    let reportIndex = 0;

    const importReports = async (domains: string[], count: number) => {
      const payloads = Array.from({ length: count }, () =>
        report(reportIndex++, pick(random, domains), random),
      );
      await appendAggregateReports(runtime.store, payloads);
      await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    };

    beforeAll(async () => {
      backend = await openBackend();
      runtime = await openRuntime(backend.env);
      tenantA = (await createTenant(runtime.store, { name: "a", region: "global" }, meta)).tenantId;
      tenantB = (await createTenant(runtime.store, { name: "b", region: "global" }, meta)).tenantId;
      await addDomain(runtime.store, { tenantId: tenantA, domain: "a-one.com" }, meta);
      await addDomain(runtime.store, { tenantId: tenantA, domain: "a-two.com" }, meta);
      await addDomain(runtime.store, { tenantId: tenantB, domain: "b-tenant.com" }, meta);
      await importReports(["a-one.com", "a-two.com", "mail.a-two.com", "b-tenant.com", "c-later.com"], 160);
    });

    afterAll(async () => {
      await runtime?.close();
      await backend?.cleanup();
    });

    it("builds a ranking per tenant, scope and calendar month and year with enough facts", async () => {
      const built = await maintainSourceRankings(runtime.db, { minFacts: 50 });
      const months = (tenantId: string) =>
        built.filter((b) => b.tenantId === tenantId && b.scope === "all").map((b) => b.bucket.start);
      // Nov, Dec 2025, Jan 2026 and the two years (reports spanning days reach into February).
      expect(months(tenantA)).toEqual(
        expect.arrayContaining([novemberFirst, decemberFirst, januaryFirst, Date.UTC(2025, 0, 1) / 1000]),
      );
      expect(built.every((b) => b.groups > 0)).toBe(true);
      // A year and its January start on the same second: both are kept.
      const kept = await runtime.db
        .selectFrom("source_ranking_build")
        .select(["bucket_start", "bucket_end"])
        .where("tenant_id", "=", tenantA)
        .where("scope", "=", "all")
        .where("bucket_start", "=", januaryFirst)
        .execute();
      expect(kept.map((b) => Number(b.bucket_end) - januaryFirst + 1).sort((a, b) => a - b)).toEqual([
        31 * DAY,
        365 * DAY,
      ]);
      // Built again at once, nothing is stale.
      expect(await maintainSourceRankings(runtime.db, { minFacts: 50 })).toEqual([]);
      expect(await expectRankingsAsBuilt(runtime.db, tenantA)).toBeGreaterThan(4);
    });

    it("answers every page like the plain grouping, for periods on and off the calendar", async () => {
      expect(await expectSame(runtime.db, tenantA)).toBeGreaterThanOrEqual(6);
      expect(await expectSame(runtime.db, tenantB)).toBeGreaterThanOrEqual(1);
    });

    it("stays exact when facts change behind a ranking, before it is rebuilt", async () => {
      const december = decemberPageOfA();
      const before = await chooseRanking(runtime.db, december, "all");
      await importReports(["a-one.com", "a-two.com", "sub.a-one.com"], 25);
      const after = await chooseRanking(runtime.db, december, "all");
      expect(after?.rankingId).toBe(before?.rankingId);
      expect(await expectSame(runtime.db, tenantA)).toBeGreaterThanOrEqual(6);
    });

    it("refreshes a ranking in place, summing only the groups that changed", async () => {
      const december = decemberPageOfA();
      const before = (await chooseRanking(runtime.db, december, "all"))!;
      // Every sender on December's first and last day: groups whose first or last fact in the
      // bucket moves out to its edges, which periods leaving out those days must find.
      const everySender = Array.from({ length: 120 }, (_, sender) => ({
        sourceIp: `192.0.2.${sender}`,
        count: 3,
        disposition: "none",
        policyDkim: "fail",
        policySpf: sender % 2 === 0 ? "pass" : "fail",
      }));
      await appendAggregateReports(
        runtime.store,
        [decemberFirst, januaryFirst - DAY].map((begin) =>
          aggregateReport({
            identity: `rank-edges-${begin}`,
            domain: "a-one.com",
            organization: "google.com",
            begin,
            end: begin + DAY - 1,
            rows: everySender,
          }),
        ),
      );
      await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
      const refreshed = await maintainSourceRankings(runtime.db, { minFacts: 50 });
      expect(refreshed.length).toBeGreaterThan(0);
      expect(
        refreshed.every((ranking) => ranking.outcome === "caught_up" && ranking.tenantId === tenantA),
      ).toBe(true);
      const after = (await chooseRanking(runtime.db, december, "all"))!;
      expect(after.rankingId).toBe(before.rankingId);
      expect(BigInt(after.builtSeq)).toBeGreaterThan(BigInt(before.builtSeq));
      // Fewer groups summed than the ranking holds: the refresh is not a rebuild in disguise.
      const decemberRefresh = refreshed.find((r) => r.scope === "all" && r.bucket.start === decemberFirst)!;
      expect(decemberRefresh.groups).toBeLessThan(after.groupCount);
      expect(await expectRankingsAsBuilt(runtime.db, tenantA)).toBeGreaterThan(4);
      expect(await expectSame(runtime.db, tenantA)).toBeGreaterThanOrEqual(6);
      // Nothing changed since: nothing to do.
      expect(await maintainSourceRankings(runtime.db, { minFacts: 50 })).toEqual([]);
    });

    it("stops using a tenant's rankings when it gains a domain, until upkeep adds the domain's groups", async () => {
      const december = decemberPageOfA();
      const before = (await chooseRanking(runtime.db, december, "all"))!;
      // c-later.com has reports from before it was added: they count for the tenant from now on.
      await addDomain(runtime.store, { tenantId: tenantA, domain: "c-later.com" }, meta);
      await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
      expect(await chooseRanking(runtime.db, december, "all")).toBeNull();
      expect(await expectSame(runtime.db, tenantA)).toBe(0);
      // Issue 21: the rankings take in the gained domain's groups (its facts are all that is
      // read), not built again from the tenant's whole history.
      const caughtUp = await maintainSourceRankings(runtime.db, { minFacts: 50 });
      expect(caughtUp.some((b) => b.tenantId === tenantA && b.outcome === "caught_up")).toBe(true);
      expect(caughtUp.some((b) => b.tenantId === tenantA && b.outcome === "built")).toBe(false);
      expect(caughtUp.some((b) => b.tenantId === tenantB)).toBe(false);
      const after = (await chooseRanking(runtime.db, december, "all"))!;
      expect(after.rankingId).toBe(before.rankingId);
      const decemberCatchUp = caughtUp.find((r) => r.scope === "all" && r.bucket.start === decemberFirst)!;
      expect(decemberCatchUp.groups).toBeGreaterThan(0);
      expect(decemberCatchUp.groups).toBeLessThan(after.groupCount);
      expect(await expectRankingsAsBuilt(runtime.db, tenantA)).toBeGreaterThan(4);
      expect(await expectSame(runtime.db, tenantA)).toBeGreaterThanOrEqual(6);
      // And losing it again takes its groups out.
      await removeDomain(runtime.store, { tenantId: tenantA, domain: "c-later.com" }, meta);
      await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
      const lost = await maintainSourceRankings(runtime.db, { minFacts: 50 });
      expect(lost.some((b) => b.tenantId === tenantA && b.outcome === "caught_up")).toBe(true);
      expect(await expectRankingsAsBuilt(runtime.db, tenantA)).toBeGreaterThan(4);
      expect(await expectSame(runtime.db, tenantA)).toBeGreaterThanOrEqual(6);
    });

    it("keeps rankings of the last 30 and 365 days, which move with the day", async () => {
      const built = await maintainSourceRankings(runtime.db, { minFacts: 50, now: januaryTwentiethNoon });
      const rolling = built.filter((b) => b.tenantId === tenantA && b.scope === "all").map((b) => b.bucket);
      const jan20 = Date.UTC(2026, 0, 20) / 1000;
      expect(rolling).toEqual(
        expect.arrayContaining([
          { start: jan20 - 30 * DAY, end: jan20 - 1 },
          { start: jan20 - 365 * DAY, end: jan20 - 1 },
        ]),
      );
      // The default period (the last 30 days to the second) is answered from the rolling ranking.
      const lastMonth = {
        tenantId: tenantA,
        start: januaryTwentiethNoon - 30 * DAY,
        end: januaryTwentiethNoon,
        page: 1,
        perPage: 9,
      };
      expect((await chooseRanking(runtime.db, lastMonth, "all"))?.bucket).toEqual({
        start: jan20 - 30 * DAY,
        end: jan20 - 1,
      });
      expect(await expectSame(runtime.db, tenantA)).toBeGreaterThanOrEqual(7);
      // A day later the rolling rankings move on with it (issue 21: the same rankings, the day
      // that left taken out and the day that came added, not built again)...
      const rollingIds = async () =>
        (
          await runtime.db
            .selectFrom("source_ranking_build")
            .select(["ranking_id", "bucket_end"])
            .where("tenant_id", "=", tenantA)
            .where("kind", "=", "rolling")
            .orderBy("ranking_id")
            .execute()
        ).map((b) => `${b.ranking_id}:${Number(b.bucket_end)}`);
      const rollingBefore = await rollingIds();
      expect(rollingBefore.length).toBe(4);
      const moved = await maintainSourceRankings(runtime.db, {
        minFacts: 50,
        now: januaryTwentiethNoon + DAY,
      });
      expect(moved.filter((b) => b.kind === "rolling").every((b) => b.outcome === "caught_up")).toBe(true);
      expect(await rollingIds()).toEqual(
        rollingBefore.map((id) => id.replace(`:${jan20 - 1}`, `:${jan20 + DAY - 1}`)),
      );
      // ...holding what a build of the new days would, and answering like the grouping.
      expect(await expectRankingsAsBuilt(runtime.db, tenantA)).toBeGreaterThan(4);
      expect(await expectSame(runtime.db, tenantA)).toBeGreaterThanOrEqual(6);
      // Weeks later still (the upkeep stopped meanwhile), moved on 20 days at once.
      await maintainSourceRankings(runtime.db, { minFacts: 50, now: januaryTwentiethNoon + 21 * DAY });
      expect(await expectRankingsAsBuilt(runtime.db, tenantA)).toBeGreaterThan(4);
      // And past a whole bucket's length: the 30-day ones are built again, the 365-day ones move.
      const far = await maintainSourceRankings(runtime.db, {
        minFacts: 50,
        now: januaryTwentiethNoon + 60 * DAY,
      });
      expect(far.some((b) => b.kind === "rolling" && b.outcome === "built")).toBe(
        far.some((b) => b.kind === "rolling" && b.bucket.end - b.bucket.start + 1 === 30 * DAY),
      );
      expect(await expectRankingsAsBuilt(runtime.db, tenantA)).toBeGreaterThan(4);
    });

    it("aggregate retention: the facts before a day go, every ranking loses exactly them", async () => {
      const later = januaryTwentiethNoon + 60 * DAY;
      await maintainSourceRankings(runtime.db, { minFacts: 50, now: later });
      const domains = (await tenantReportDomains(runtime.db, tenantA)).map((d) => d.domain).sort();
      const factsOf = async (names: string[]) =>
        Number(
          (
            await sql<{ n: string }>`select count(*)::text as n from agg_source
              where domain = any(${names}::text[]) and t < ${decemberFirst + 9 * DAY}`.execute(runtime.db)
          ).rows[0]!.n,
        );
      const bDomains = (await tenantReportDomains(runtime.db, tenantB)).map((d) => d.domain);
      const bBefore = await factsOf(bDomains);
      expect(await factsOf(domains)).toBeGreaterThan(0);
      const rankingsBefore = await runtime.db
        .selectFrom("source_ranking_build")
        .select(["ranking_id", "bucket_start", "bucket_end"])
        .where("tenant_id", "=", tenantA)
        .execute();
      expect(rankingsBefore.some((b) => Number(b.bucket_start) === novemberFirst)).toBe(true);
      await runtime.store.append(
        streams.personalData(tenantA),
        [
          newEvent(
            "AggregateFactsExpired",
            { tenantId: tenantA, before: "2025-12-10", domains, removed: { messages: 0, rows: {} } },
            meta,
          ),
        ],
        "any",
      );
      await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
      expect(await factsOf(domains)).toBe(0);
      expect(await factsOf(bDomains)).toBe(bBefore);
      // November lay wholly before the day: its rankings went whole; December's and the year's
      // lost their first days' groups and sums.
      const rankingsAfter = await runtime.db
        .selectFrom("source_ranking_build")
        .select(["ranking_id", "bucket_start"])
        .where("tenant_id", "=", tenantA)
        .execute();
      expect(rankingsAfter.some((b) => Number(b.bucket_start) === novemberFirst)).toBe(false);
      expect(rankingsAfter.length).toBeGreaterThan(4);
      expect(await expectRankingsAsBuilt(runtime.db, tenantA)).toBeGreaterThan(4);
      expect(await expectSame(runtime.db, tenantA)).toBeGreaterThanOrEqual(6);
      expect(await expectSame(runtime.db, tenantB)).toBeGreaterThanOrEqual(1);
      // The upkeep carries on from there: nothing for it to catch up, and still as built after.
      await maintainSourceRankings(runtime.db, { minFacts: 50, now: later });
      expect(await expectRankingsAsBuilt(runtime.db, tenantA)).toBeGreaterThan(4);
    });
  });
}

// Needs a second connection while a batch is open: PostgreSQL only (PGlite has one).
export function batchAfterBuildCase(): void {
  describe("by-source rankings and a projection batch that commits after a build", () => {
    let backend: Backend;
    let runtime: Runtime;
    let tenantId: string;
    const random = prng(11);

    beforeAll(async () => {
      backend = await postgresBackend();
      runtime = await openRuntime(backend.env);
      tenantId = (await createTenant(runtime.store, { name: "a", region: "global" }, meta)).tenantId;
      await addDomain(runtime.store, { tenantId, domain: "a-one.com" }, meta);
      await appendAggregateReports(
        runtime.store,
        Array.from({ length: 60 }, (_, index) => report(index, "a-one.com", random)),
      );
      await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
      expect((await maintainSourceRankings(runtime.db, { minFacts: 50 })).length).toBeGreaterThan(0);
    });

    afterAll(async () => {
      await runtime?.close();
      await backend?.cleanup();
    });

    it("treats the batch's facts as changed, though it took its number before the build", async () => {
      await appendAggregateReports(
        runtime.store,
        Array.from({ length: 20 }, (_, index) => report(1000 + index, "a-one.com", random)),
      );
      const events = await runtime.store.readAll("start", 10_000);
      let upkeepMeanwhile: Awaited<ReturnType<typeof maintainSourceRankings>> | undefined;
      await runtime.db.transaction().execute(async (trx) => {
        await applyBatchWithin(trx, allProjections, events);
        // Another connection, as the projector's upkeep would be, while the batch is not
        // committed: on January 20th it builds that day's rolling rankings.
        upkeepMeanwhile = await maintainSourceRankings(runtime.db, {
          minFacts: 50,
          now: januaryTwentiethNoon,
        });
      });
      expect(upkeepMeanwhile?.map((ranking) => ranking.outcome)).toContain("built");
      expect(upkeepMeanwhile?.every((ranking) => ranking.outcome === "built")).toBe(true);
      // Committed now, with a number the rankings have not seen: answers include it at once...
      expect(await expectSameAsGrouping(runtime.db, tenantId, pagesAtEveryPosition)).toBeGreaterThanOrEqual(
        7,
      );
      // ...and upkeep refreshes them.
      const refreshed = await maintainSourceRankings(runtime.db, { minFacts: 50, now: januaryTwentiethNoon });
      expect(refreshed.length).toBeGreaterThan(0);
      expect(refreshed.every((ranking) => ranking.outcome === "caught_up")).toBe(true);
      expect(await expectSameAsGrouping(runtime.db, tenantId, pagesAtEveryPosition)).toBeGreaterThanOrEqual(
        7,
      );
    });

    it("an expiry in a batch holds the upkeep off until it commits; the rankings are as built after", async () => {
      await maintainSourceRankings(runtime.db, { minFacts: 50, now: januaryTwentiethNoon });
      const domains = (await tenantReportDomains(runtime.db, tenantId)).map((d) => d.domain);
      await runtime.store.append(
        streams.personalData(tenantId),
        [
          newEvent(
            "AggregateFactsExpired",
            { tenantId, before: "2025-12-15", domains, removed: { messages: 0, rows: {} } },
            meta,
          ),
        ],
        "any",
      );
      const events = await runtime.store.readAll("start", 10_000);
      let upkeepMeanwhile: Awaited<ReturnType<typeof maintainSourceRankings>> | undefined;
      await runtime.db.transaction().execute(async (trx) => {
        await applyBatchWithin(trx, allProjections, events);
        // The batch has trimmed the rankings and holds the upkeep's lock: the upkeep skips its turn
        // rather than catch up rankings from facts the batch is taking away.
        upkeepMeanwhile = await maintainSourceRankings(runtime.db, {
          minFacts: 50,
          now: januaryTwentiethNoon,
        });
      });
      expect(upkeepMeanwhile).toEqual([]);
      expect(await expectRankingsAsBuilt(runtime.db, tenantId)).toBeGreaterThan(0);
      expect(await expectSameAsGrouping(runtime.db, tenantId, pagesAtEveryPosition)).toBeGreaterThanOrEqual(
        1,
      );
    });
  });
}
