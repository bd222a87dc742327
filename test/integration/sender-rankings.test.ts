/**
 * aggregate_by_sender and policy_impact answer from a tenant's sender ranking when one answers
 * the period exactly. Held here to the grouping of the facts (which test/e2e/senders-api.test.ts
 * holds to an independent computation from report files) and to an independent count from the
 * reports this file makes: whole lists and pages, for periods on and off the standard buckets,
 * after new facts, an address renamed and an expiry (each added to the ranking at query time,
 * then caught up by the upkeep into what a build holds), after approvals change (by service and by range), after the tenant gains a
 * domain, and after a replay; on PGlite (the embedded default) and on PostgreSQL.
 */
import { newEvent, type SourceIpNaming, streams } from "@dmarc-ledger/events";
import { catchUp, rebuildBeside } from "@dmarc-ledger/projection-engine";
import {
  aggregateBySender,
  aggregateBySenderGrouped,
  aggregateBySenderRanked,
  type PageQuery,
  policyImpact,
  policyImpactGrouped,
  policyImpactRanked,
} from "@dmarc-ledger/queries";
import {
  buildSenderRanking,
  maintainSenderRankings,
  ownedReportDomains,
  senderChangeMarks,
  senderRankingBuilds,
} from "@dmarc-ledger/report-read-models";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant, setSenderApproval } from "@dmarc-ledger/tenancy";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports, type TestRow } from "../support/aggregate-report.js";
import { prng } from "../support/prng.js";
import { type Backend, backends } from "../support/service-harness.js";
import { namedSourceIp } from "../support/source-ip-naming.js";

const meta = { causedBy: "test" };
const DAY = 86_400;
/** The traffic: November and December 2025; the data's newest day is 31 December. */
const novemberFirst = Date.UTC(2025, 10, 1) / 1000;
const decemberFirst = Date.UTC(2025, 11, 1) / 1000;
const januaryFirst = Date.UTC(2026, 0, 1) / 1000;
const lastDay = januaryFirst / DAY - 1;
const now = januaryFirst + 5 * 3600;

/** Seeded afresh for each backend: both import the same reports. */
let random = prng(23);
const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!;

const addressOf = (i: number) => `203.0.113.${i}`;
/** Addresses 0–59: services, base domains, ASes; 60–79 never named. */
function namingOf(i: number): SourceIpNaming | null {
  if (i >= 60) return null;
  const asn = { number: 64_500 + (i % 7), organization: `Net ${i % 7}` };
  const sources = { serviceMap: "test", asnDatabase: "test", countryDatabase: "test" };
  const country = ["US", "DE", "FR"][i % 3]!;
  if (i < 30)
    return {
      baseDomain: `s${i % 6}.example`,
      service: { name: `Service ${i % 6}`, type: "SaaS" },
      asn,
      country,
      sources,
    };
  if (i < 45) return { baseDomain: `host${i % 5}.example`, service: null, asn, country, sources };
  return { baseDomain: null, service: null, asn, country, sources };
}

interface Sent {
  domain: string;
  t: number;
  ip: string;
  count: number;
  stoppedByReject: boolean;
}
const sent: Sent[] = [];
let reportIndex = 0;

/** A one-day report beginning at midnight (so each row is one fact at its begin). */
function report(domain: string, day: number) {
  const begin = day * DAY;
  const rows: TestRow[] = Array.from({ length: 4 + Math.floor(random() * 12) }, () => {
    const ip = addressOf(Math.floor(random() ** 2 * 80));
    const aligned = random() < 0.5;
    const disposition = aligned ? "none" : pick(["none", "none", "quarantine", "reject"]);
    const count = 1 + Math.floor(random() * 50);
    sent.push({ domain, t: begin, ip, count, stoppedByReject: !aligned && disposition !== "reject" });
    return {
      sourceIp: ip,
      count,
      disposition,
      policyDkim: aligned ? "pass" : "fail",
      policySpf: aligned ? "pass" : "fail",
      arc: aligned ? null : pick([null, "pass"] as const),
    };
  });
  return aggregateReport({
    identity: `senders-${reportIndex++}`,
    domain,
    organization: pick(["google.com", "outlook.com"]),
    begin,
    end: begin + DAY - 1,
    rows,
  });
}

const periods = [
  {
    label: "the last 30 days (a rolling bucket)",
    start: (lastDay - 29) * DAY,
    end: januaryFirst - 1,
    bucket: true,
  },
  { label: "December (a calendar month)", start: decemberFirst, end: januaryFirst - 1, bucket: true },
  { label: "2025 (a year)", start: Date.UTC(2025, 0, 1) / 1000, end: januaryFirst - 1, bucket: true },
  { label: "the last 90 days to the second, asked at 05:00", start: now - 90 * DAY, end: now, bucket: true },
  {
    label: "December without its last day",
    start: decemberFirst,
    end: januaryFirst - DAY - 1,
    bucket: false,
  },
  {
    label: "mid-November to mid-December",
    start: novemberFirst + 14 * DAY,
    end: decemberFirst + 15 * DAY,
    bucket: false,
  },
];

/**
 * A guard against a hang, not a target: on the 2-core machine, in a slow phase, the expiry test
 * on PGlite took 165 s (64 s in the run before it); the suite's default is 120 s.
 */
const hangGuard = { timeout: 360_000 };

describe.each(backends)("sender pages from sender rankings on %s", hangGuard, (_name, makeBackend) => {
  let backend: Backend;
  let runtime: Runtime;
  let tenantId: string;
  let otherTenant: string;
  const owned = new Set(["a-one.com", "a-two.com"]);

  const project = () => catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
  const importReports = async (domains: string[], count: number, days: [number, number]) => {
    const payloads = Array.from({ length: count }, () =>
      report(pick(domains), days[0] + Math.floor(random() * (days[1] - days[0] + 1))),
    );
    await appendAggregateReports(runtime.store, payloads);
    await project();
  };
  const name = async (i: number, naming: SourceIpNaming | null, revision: bigint | "no_stream" | "any") => {
    await runtime.store.append(
      streams.sourceIp(addressOf(i)),
      [namedSourceIp(addressOf(i), naming, { resolvedAt: new Date(0), metadata: meta })],
      revision,
    );
  };
  /** The tenant's decision on a sender or an IP range of one of its domains. */
  const decide = (decision: Omit<Parameters<typeof setSenderApproval>[1], "tenantId">) =>
    setSenderApproval(runtime.store, { tenantId, ...decision }, meta);
  const maintain = () => maintainSenderRankings(runtime.db, { now, minFacts: 1, minRebuildAgeMs: 0 });

  /**
   * Every period: the whole list and the pages of both endpoints (both policies) as the grouping
   * answers them; returns the labels of the periods a ranking answered.
   */
  const expectSameAsGrouping = async (domain?: string): Promise<string[]> => {
    const ranked: string[] = [];
    for (const period of periods) {
      const base: PageQuery = { tenantId, start: period.start, end: period.end, page: 1, perPage: 7, domain };
      const whole = { ...base, perPage: 1000 };
      const grouped = await aggregateBySenderGrouped(runtime.db, whole);
      expect(await aggregateBySender(runtime.db, whole), `${period.label} whole list`).toEqual(grouped);
      const lastPage = Math.ceil(grouped.total / 7);
      for (const page of [1, 2, Math.ceil(lastPage / 2), lastPage - 1, lastPage, lastPage + 1]) {
        if (page < 1) continue;
        expect(
          await aggregateBySender(runtime.db, { ...base, page }),
          `${period.label} page ${page}`,
        ).toEqual({
          total: grouped.total,
          records: grouped.records.slice((page - 1) * 7, page * 7),
        });
      }
      for (const policy of ["quarantine", "reject"] as const) {
        const impact = await policyImpactGrouped(runtime.db, { ...whole, policy });
        expect(await policyImpact(runtime.db, { ...whole, policy }), `${period.label} ${policy}`).toEqual(
          impact,
        );
        for (const page of [1, Math.ceil(impact.total / 7), Math.ceil(impact.total / 7) + 1]) {
          if (page < 1) continue;
          const paged = await policyImpactGrouped(runtime.db, { ...base, page, policy });
          expect(
            await policyImpact(runtime.db, { ...base, page, policy }),
            `${period.label} ${policy} page ${page}`,
          ).toEqual(paged);
        }
      }
      if (await aggregateBySenderRanked(runtime.db, base)) ranked.push(period.label);
    }
    return ranked;
  };

  /**
   * Every standard bucket answered from a ranking, like the grouping: tenant-wide and with a
   * domain filter (the ranking's rows of that domain; a-two.com's include mail.a-two.com's
   * reports). A domain that is not the tenant's is grouped (and answers nothing).
   */
  const expectRankedOnBuckets = async () => {
    const onBuckets = periods.filter((p) => p.bucket).map((p) => p.label);
    expect(await expectSameAsGrouping()).toEqual(onBuckets);
    for (const domain of ["a-one.com", "a-two.com"])
      expect(await expectSameAsGrouping(domain), domain).toEqual(onBuckets);
    expect(await expectSameAsGrouping("mail.a-two.com")).toEqual([]);
  };

  /** Volume and SourceIPs per (domain, sender), and Stopped under p=reject, counted from the reports sent. */
  const expectIndependentCounts = async (
    period: { start: number; end: number },
    names: Map<string, string>,
  ) => {
    const volume = new Map<string, number>();
    const ips = new Map<string, Set<string>>();
    const stopped = new Map<string, number>();
    for (const row of sent) {
      if (row.t < period.start || row.t > period.end) continue;
      const owner = [...owned].find((d) => row.domain === d || row.domain.endsWith(`.${d}`));
      if (!owner) continue;
      const key = `${owner}|${names.get(row.ip) ?? "unknown"}`;
      volume.set(key, (volume.get(key) ?? 0) + row.count);
      ips.set(key, (ips.get(key) ?? new Set()).add(row.ip));
      if (row.stoppedByReject) stopped.set(key, (stopped.get(key) ?? 0) + row.count);
    }
    const query = { tenantId, ...period, page: 1, perPage: 1000 };
    const answer = await aggregateBySender(runtime.db, query);
    expect(
      Object.fromEntries(
        answer.records.map((r) => [`${r.Domain}|${r.Service}`, [Number(r.Volume), Number(r.SourceIPs)]]),
      ),
    ).toEqual(Object.fromEntries([...volume].map(([key, n]) => [key, [n, ips.get(key)!.size]])));
    const impact = await policyImpact(runtime.db, { ...query, policy: "reject" });
    expect(
      Object.fromEntries(impact.records.map((r) => [`${r.Domain}|${r.Service}`, Number(r.Stopped)])),
    ).toEqual(Object.fromEntries(stopped));
  };
  const senderNames = new Map<string, string>();
  const december = { start: decemberFirst, end: januaryFirst - 1 };

  beforeAll(async () => {
    random = prng(23);
    sent.length = 0;
    reportIndex = 0;
    backend = await makeBackend();
    runtime = await openRuntime(backend.env);
    tenantId = (await createTenant(runtime.store, { name: "a", region: "global" }, meta)).tenantId;
    otherTenant = (await createTenant(runtime.store, { name: "b", region: "global" }, meta)).tenantId;
    await addDomain(runtime.store, { tenantId, domain: "a-one.com" }, meta);
    await addDomain(runtime.store, { tenantId, domain: "a-two.com" }, meta);
    await addDomain(runtime.store, { tenantId: otherTenant, domain: "b-tenant.com" }, meta);
    await importReports(["a-one.com", "a-two.com", "mail.a-two.com", "b-tenant.com", "c-later.com"], 120, [
      novemberFirst / DAY,
      lastDay,
    ]);
    // Facts on the first and last days: the newest day is 31 December, and a period that leaves
    // out 31 December differs from December where the tenant has facts.
    await appendAggregateReports(runtime.store, [
      report("a-one.com", decemberFirst / DAY),
      report("a-two.com", lastDay),
      report("mail.a-two.com", novemberFirst / DAY),
    ]);
    await project();
    for (let i = 0; i < 80; i++) {
      const naming = namingOf(i);
      if (!naming) continue;
      await name(i, naming, "no_stream");
      senderNames.set(addressOf(i), naming.service?.name ?? naming.baseDomain ?? naming.asn!.organization);
    }
    await decide({ domain: "a-one.com", service: "Service 1", approved: true });
    await decide({ domain: "a-two.com", service: "Service 2", approved: false });
    await project();
  });

  afterAll(async () => {
    await runtime?.close();
    await backend?.cleanup();
  });

  it("builds the standard buckets around today and the newest day, then nothing while current", async () => {
    const built = await maintain();
    const mine = built.filter((b) => b.tenantId === tenantId);
    expect(mine.every((b) => b.outcome === "built" && (b.groups ?? 0) > 0)).toBe(true);
    const spans = mine.map((b) => `${b.bucket.start}-${b.bucket.end}`);
    expect(spans).toEqual(
      expect.arrayContaining([
        `${(lastDay - 29) * DAY}-${januaryFirst - 1}`,
        `${decemberFirst}-${januaryFirst - 1}`,
        `${Date.UTC(2025, 0, 1) / 1000}-${januaryFirst - 1}`,
      ]),
    );
    expect(await maintain()).toEqual([]);
  });

  it("adds new facts at query time until the upkeep catches the rankings up, however young", async () => {
    await importReports(["a-one.com"], 1, [lastDay - 1, lastDay - 1]);
    // Answered from the rankings with the new facts added (no range decided yet: each address's
    // approval is its sender's).
    await expectRankedOnBuckets();
    await expectEveryPage(december);
    await expectCaughtUp("facts");
    await expectRankedOnBuckets();
    await expectEveryPage(december);
  });

  it("answers like the grouping, from a ranking on the buckets, by grouping off them", async () => {
    await expectRankedOnBuckets();
    await expectIndependentCounts(december, senderNames);
    await expectIndependentCounts({ start: (lastDay - 29) * DAY, end: januaryFirst - 1 }, senderNames);
  });

  it("approvals apply at once, by service and by range (splitting a sender by address)", async () => {
    await decide({ domain: "a-one.com", service: "Service 0", approved: true });
    await decide({ domain: "a-one.com", range: "203.0.113.0/29", approved: false });
    await decide({ domain: "a-two.com", range: "203.0.113.60/30", approved: true });
    await decide({ domain: "a-two.com", range: "203.0.113.62/32", approved: false });
    await project();
    const ranked = await expectSameAsGrouping();
    expect(ranked).toEqual(periods.filter((p) => p.bucket).map((p) => p.label));
    const impact = await policyImpact(runtime.db, {
      tenantId,
      ...december,
      page: 1,
      perPage: 1000,
      policy: "reject",
    });
    // The range split Service 0 of a-one.com: some addresses refused, the rest approved.
    expect(
      impact.records.find((r) => r.Domain === "a-one.com" && r.Service === "Service 0")?.Approved,
    ).toBeNull();
    expect(await maintain()).toEqual([]);
  });

  /** Every page of both endpoints over one period, three records a page, as the grouping pages them. */
  const expectEveryPage = async (period: { start: number; end: number }) => {
    const base: PageQuery = { tenantId, ...period, page: 1, perPage: 3 };
    const whole = await aggregateBySenderGrouped(runtime.db, { ...base, perPage: 1000 });
    for (let page = 1; page <= Math.ceil(whole.total / 3); page++)
      expect(await aggregateBySenderRanked(runtime.db, { ...base, page }), `page ${page}`).toEqual({
        total: whole.total,
        records: whole.records.slice((page - 1) * 3, page * 3),
      });
    for (const policy of ["quarantine", "reject"] as const) {
      const impact = await policyImpactGrouped(runtime.db, { ...base, perPage: 1000, policy });
      for (let page = 1; page <= Math.ceil(impact.total / 3); page++)
        expect(
          await policyImpactRanked(runtime.db, { ...base, page, policy }),
          `${policy} page ${page}`,
        ).toEqual({
          ...impact,
          records: impact.records.slice((page - 1) * 3, page * 3),
        });
    }
  };
  /** Answered from the rankings with the changes since their build added, like the grouping; not without them. */
  const expectPatchedAnswers = async () => {
    await expectRankedOnBuckets();
    await expectEveryPage(december);
    await expectIndependentCounts(december, senderNames);
    expect(
      await aggregateBySenderRanked(
        runtime.db,
        { tenantId, ...december, page: 1, perPage: 7 },
        { patchLimit: 0 },
      ),
    ).toBeNull();
  };
  const deltaRows = async () =>
    Number(
      (await sql<{ n: string }>`select count(*)::text as n from agg_sender_delta`.execute(runtime.db))
        .rows[0]!.n,
    );

  /** A ranking's rows and totals, without its id, in a stable order. */
  const rankingContents = async (buildId: string) => {
    const read = async (table: string, order: string) =>
      (
        await sql<Record<string, unknown>>`select * from ${sql.table(table)}
          where build_id = ${buildId}::bigint order by ${sql.raw(order)}`.execute(runtime.db)
      ).rows.map(({ build_id: _id, built_at: _at, built_seq: _seq, ...row }) => row);
    return {
      build: await read("sender_ranking_build", "build_id"),
      groups: await read("sender_ranking", "owner, sender"),
      addresses: await read("sender_ranking_ip", "owner, source_ip"),
      picks: await read("sender_ranking_pick", "scope, owner, sender"),
    };
  };
  /**
   * Every ranking of the tenant, caught up by the upkeep, holds what a build of its bucket holds
   * now: the same rows of every (domain, sender), (domain, source IP) and pick, the same totals
   * and naming marks. Checked by building each again. (A ranking whose days no batch touched
   * keeps its older fact mark: compared apart.)
   */
  const expectCaughtUpLikeBuilt = async () => {
    const builds = await senderRankingBuilds(runtime.db, tenantId);
    expect(builds.length).toBeGreaterThan(0);
    for (const build of builds) {
      const caught = await rankingContents(build.buildId);
      const fresh = await buildSenderRanking(
        runtime.db,
        { tenantId, kind: build.kind, bucket: build.bucket },
        0,
      );
      const [rebuilt] = (await senderRankingBuilds(runtime.db, tenantId)).filter(
        (b) => b.bucket.start === fresh.bucket.start && b.bucket.end === fresh.bucket.end,
      );
      expect(await rankingContents(rebuilt!.buildId), `${build.bucket.start}-${build.bucket.end}`).toEqual(
        caught,
      );
    }
  };
  /** One upkeep round at the default minRebuildAgeMs: the tenant's stale rankings caught up, none built again. */
  const expectCaughtUp = async (reason: "facts" | "names") => {
    const round = (await maintainSenderRankings(runtime.db, { now, minFacts: 1 })).filter(
      (b) => b.tenantId === tenantId,
    );
    expect(round.length).toBeGreaterThan(0);
    expect(round.map((b) => [b.outcome, b.reason])).toEqual(round.map(() => ["caught up", reason]));
    expect(round.every((b) => (b.addresses ?? 0) > 0 && (b.groups ?? 0) > 0)).toBe(true);
    // Caught up to the last batch: what commits later is numbered after it.
    const { factSeq } = await senderChangeMarks(runtime.db);
    const builds = await senderRankingBuilds(runtime.db, tenantId);
    for (const caught of round)
      expect(builds.find((b) => b.bucket.start === caught.bucket.start)?.builtSeq).toBe(factSeq);
    // Every ranking counts the changes now: the deltas are gone, and nothing is left to do.
    expect(await deltaRows()).toBe(0);
    expect(await maintain()).toEqual([]);
    await expectCaughtUpLikeBuilt();
  };

  it("new facts are added to the rankings at query time, then caught up by the upkeep", async () => {
    const query = { tenantId, ...december, page: 1, perPage: 1000 };
    const before = await aggregateBySenderGrouped(runtime.db, query);
    expect(await deltaRows()).toBe(0);
    await importReports(["a-one.com", "mail.a-two.com"], 6, [lastDay - 3, lastDay]);
    const after = await aggregateBySenderGrouped(runtime.db, query);
    expect(after.records).not.toEqual(before.records);
    expect(await deltaRows()).toBeGreaterThan(0);
    // Answered from the ranking built before, with the new facts added: every page as grouped.
    expect(await aggregateBySenderRanked(runtime.db, query)).toEqual(after);
    await expectRankedOnBuckets();
    await expectEveryPage(december);
    await expectIndependentCounts(december, senderNames);
    // More changes than the query may add: grouped.
    expect(await aggregateBySenderRanked(runtime.db, query, { patchLimit: 3 })).toBeNull();
    expect(
      await policyImpactRanked(runtime.db, { ...query, policy: "reject" }, { patchLimit: 3 }),
    ).toBeNull();
    await expectCaughtUp("facts");
    expect(await aggregateBySenderRanked(runtime.db, query, { patchLimit: 0 })).toEqual(after);
    await expectRankedOnBuckets();
    await expectIndependentCounts(december, senderNames);
    // November's facts did not change, but no ranking holds November alone: nothing else to build.
    expect(await maintain()).toEqual([]);
  });

  it("a renamed address moves to its new sender at query time, then in the caught-up ranking", async () => {
    // Address 3 (Service 3) now named as a base domain; address 70 named for the first time.
    await name(3, { ...namingOf(3)!, service: null, baseDomain: "moved.example" }, "any");
    await name(70, namingOf(10), "no_stream");
    await project();
    senderNames.set(addressOf(3), "moved.example");
    senderNames.set(addressOf(70), "Service 4");
    // Moved at query time: from the ranking, with both senders counted again.
    await expectPatchedAnswers();
    // Then in the rankings: address 3's row under its new sender, both senders summed again.
    await expectCaughtUp("names");
    await expectRankedOnBuckets();
    await expectIndependentCounts(december, senderNames);
    // The same answer again (the resolver's weekly refresh) renames nothing.
    await name(3, { ...namingOf(3)!, service: null, baseDomain: "moved.example" }, "any");
    await project();
    expect(await maintain()).toEqual([]);
  });

  it("a domain added later claims its reports", async () => {
    await addDomain(runtime.store, { tenantId, domain: "c-later.com" }, meta);
    await project();
    owned.add("c-later.com");
    expect(await expectSameAsGrouping()).toEqual([]);
    // Not caught up (the rankings count other domains): built again, once old enough.
    expect(await maintainSenderRankings(runtime.db, { now, minFacts: 1 })).toEqual([]);
    const rebuilt = (await maintain()).filter((b) => b.tenantId === tenantId);
    expect(rebuilt.length).toBeGreaterThan(0);
    expect(rebuilt.filter((b) => b.outcome === "rebuilt").every((b) => b.reason === "domains")).toBe(true);
    await expectRankedOnBuckets();
    await expectIndependentCounts(december, senderNames);
  });

  it("an expiry of the tenant's old facts is taken off the rankings at query time, then caught up", async () => {
    const domains = (await ownedReportDomains(runtime.db, tenantId)).map((d) => d.domain);
    await runtime.store.append(
      streams.personalData(tenantId),
      [
        newEvent(
          "AggregateFactsExpired",
          { tenantId, before: "2025-12-05", domains, removed: { messages: 0, rows: {} } },
          meta,
        ),
      ],
      "any",
    );
    await project();
    const cutoff = decemberFirst + 4 * DAY;
    for (let i = sent.length - 1; i >= 0; i--)
      if (sent[i]!.t < cutoff && domains.includes(sent[i]!.domain)) sent.splice(i, 1);
    // The facts it removed are taken off the rankings at query time, as negated deltas, then
    // out of them: addresses and senders left without messages go.
    await expectPatchedAnswers();
    await expectCaughtUp("facts");
    await expectRankedOnBuckets();
    await expectIndependentCounts(december, senderNames);
  });

  it("a replay gives the same answers, grouped, then from rankings built again", async () => {
    const query = { tenantId, ...december, page: 1, perPage: 1000 };
    const before = [
      await aggregateBySender(runtime.db, query),
      await policyImpact(runtime.db, { ...query, policy: "quarantine" }),
    ];
    await rebuildBeside({
      store: runtime.store,
      db: runtime.db,
      projections: allProjections,
      concurrentSessions: runtime.database.concurrentSessions,
    });
    expect(await aggregateBySenderRanked(runtime.db, query)).toBeNull();
    const again = async () => [
      await aggregateBySender(runtime.db, query),
      await policyImpact(runtime.db, { ...query, policy: "quarantine" }),
    ];
    expect(await again()).toEqual(before);
    expect((await maintain()).length).toBeGreaterThan(0);
    expect(await policyImpactRanked(runtime.db, { ...query, policy: "quarantine" })).not.toBeNull();
    expect(await again()).toEqual(before);
  });
});
