/**
 * Aggregate retention (docs/privacy.md, "How long"): a tenant's aggregate_days expires the facts
 * of its report domains counted on days before the cutoff day. Every aggregate endpoint then
 * answers what an independent reading of the report files gives over the kept facts only (each
 * report split over its days as the contract says), a replay answers the same, the history holds
 * the event with its counts, and another tenant (keeping its facts) loses nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { streams } from "@dmarc-ledger/events";
import { catchUp, rebuildBeside } from "@dmarc-ledger/projection-engine";
import { aggregateCutoffDay, applyRetention } from "@dmarc-ledger/runtime/personal-data";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateCorpus } from "../support/corpus.js";
import { byVolumeThenKey, countersOf, groupBy, type SimpleRow } from "../support/independent-aggregate.js";
import {
  expectedPolicyImpact,
  expectedSenders,
  readSenderRows,
  type SenderRow,
  type TestApprovals,
  unknownSender,
} from "../support/independent-senders.js";
import { expectedSeries, splitOverDays } from "../support/independent-series.js";
import { expectedSourceRecords } from "../support/independent-sources.js";
import { aggregateReportXml } from "../support/report-xml.js";
import { holdRetentionLease } from "../support/retention-held.js";
import {
  type Backend,
  backends,
  cli,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { type ServiceNaming, serviceNamings } from "../support/service-namings.js";
import { waitForEverySourceNamed } from "../support/sources-named.js";

const corpusFiles = [
  "!example.com!1538204542!1538463818.xml",
  "!large-example.com!1711897200!1711983600.xml",
  "addisonfoods.com!example.com!1536105600!1536191999.xml",
  "empty_reason.xml",
  "example.net!example.com!1529366400!1529452799.xml",
  "ikea.com!example.de!1538690400!1538776800.xml",
  "old_draft_from_wiki.xml",
  "protection.outlook.com!example.com!1711756800!1711843200.xml",
  "rfc9990-example.net!example.com!1700000000!1700086399.xml",
  "usssa.com!example.com!1538784000!1538870399.xml",
  "veeam.com!example.com!1530133200!1530219600.xml",
].map((name) => `${aggregateCorpus}${name}`);

const at = (iso: string) => Date.parse(iso) / 1000;
/** The run's time: with 30 days kept, the facts of days before 3 March 2024 go. */
const now = new Date("2024-04-02T12:00:00Z");
const cutoffDay = "2024-03-03";
const period = "start=0&end=2000000000";

/** Reports written for the cases the corpus lacks (each with the rows' auth results passing or not). */
const generated = {
  // Four days across the cutoff: split over them, its first two days go, its last two stay.
  spanning: aggregateReportXml({
    reportId: "retention-spanning",
    domain: "example.com",
    organization: "google.com",
    begin: at("2024-03-01T00:00:00Z"),
    end: at("2024-03-05T00:00:00Z"),
    rows: [
      { sourceIp: "198.51.100.20", count: 41 },
      { sourceIp: "198.51.100.21", count: 13, dkim: "fail", spf: "fail", disposition: "quarantine" },
    ],
  }),
  // Under 24 hours from the evening before the cutoff day: it counts on the day of its begin, so
  // it goes whole.
  evening: aggregateReportXml({
    reportId: "retention-evening",
    domain: "example.com",
    organization: "yahoo.com",
    begin: at("2024-03-02T18:00:00Z"),
    end: at("2024-03-03T17:59:59Z"),
    rows: [{ sourceIp: "198.51.100.22", count: 5, dkim: "fail", spf: "fail" }],
  }),
  // A subdomain counts for the tenant of its parent: its old report goes, its new one stays.
  subOld: aggregateReportXml({
    reportId: "retention-sub-old",
    domain: "mail.example.com",
    organization: "google.com",
    begin: at("2024-02-10T00:00:00Z"),
    end: at("2024-02-10T23:59:59Z"),
    rows: [{ sourceIp: "198.51.100.30", count: 9, dkim: "fail", spf: "fail" }],
  }),
  subNew: aggregateReportXml({
    reportId: "retention-sub-new",
    domain: "mail.example.com",
    organization: "google.com",
    begin: at("2024-03-20T00:00:00Z"),
    end: at("2024-03-20T23:59:59Z"),
    rows: [{ sourceIp: "198.51.100.30", count: 4 }],
  }),
  // The other tenant's, as old as acme's that go: it keeps its facts, so they stay.
  otherOld: aggregateReportXml({
    reportId: "retention-other-old",
    domain: "example.de",
    organization: "google.com",
    begin: at("2024-02-01T00:00:00Z"),
    end: at("2024-02-01T23:59:59Z"),
    rows: [{ sourceIp: "198.51.100.40", count: 6, dkim: "fail", spf: "fail" }],
  }),
};

/**
 * The rows split over their days by the contract's rule (reports of more than 24 hours), each part
 * at its own begin (the day's midnight, or the report's begin on its first day), kept when its day
 * is not before `cutoff` (null: all).
 */
function partsKept<T extends SimpleRow>(rows: T[], cutoff: string | null): T[] {
  return rows.flatMap((row) =>
    splitOverDays(row)
      .filter((part) => cutoff === null || part.date >= cutoff)
      .map((part) => {
        const begin = Math.max(row.begin, at(`${part.date}T00:00:00Z`));
        const { date: _date, ...rest } = part;
        return { ...(rest as unknown as T), begin, end: begin + 1 };
      }),
  );
}

const noApprovals: TestApprovals = { services: new Map(), addresses: new Map() };

describe.each(backends)("aggregate retention on %s", (_name, makeBackend) => {
  let backend: Backend;
  let handle: ServiceHandle;
  let acme: { tenantId: string; apiKey: string };
  let other: { tenantId: string; apiKey: string };
  let rows: SenderRow[];
  // The service names every source at first sight: retention is this test's subject, so the
  // names are its input (read once they are all given), and the rest is computed from the files.
  let namings: Map<string, ServiceNaming>;
  const senderOf = (ip: string) => namings.get(ip)?.sender ?? unknownSender;
  const sourceOf = (ip: string) => namings.get(ip)!.source;
  const tmp = mkdtempSync(join(tmpdir(), "dl-agg-retention-"));
  const isAcme = (row: SimpleRow) => row.domain === "example.com" || row.domain.endsWith(".example.com");

  /** A list endpoint's pages over the whole period, as one answer (the same total on each page). */
  const everyPage = async (endpoint: string, key: string) => {
    const records: unknown[] = [];
    const totals = new Set<unknown>();
    for (let page = 1; page < 20; page++) {
      const response = await handle.get(`${endpoint}?${period}&page=${page}&per_page=1000`, key);
      expect(response.status, response.body).toBe(200);
      const body = response.json as { status: string; total: unknown; records: unknown[] };
      totals.add(body.total);
      if (body.records.length === 0) {
        expect(totals.size, endpoint).toBe(1);
        return { status: body.status, total: body.total, records };
      }
      records.push(...body.records);
    }
    throw new Error(`${endpoint}: pagination did not end`);
  };

  /** Every aggregate endpoint's answer for a tenant, as the API gives it. */
  const answers = async (key: string) => {
    const bodies: Record<string, unknown> = {};
    for (const endpoint of [
      "aggregate_by_domain",
      "aggregate_by_domain_group",
      "aggregate_by_organization",
      "aggregate_by_source",
      "aggregate_by_unaligned_source",
      "aggregate_by_sender",
    ]) {
      bodies[endpoint] = await everyPage(endpoint, key);
    }
    const series = await handle.get(
      `aggregate_by_date?start=${at("2024-01-20T00:00:00Z")}&end=${at("2024-04-05T23:59:59Z")}&per_page=1000`,
      key,
    );
    expect(series.status, series.body).toBe(200);
    bodies.aggregate_by_date = series.json;
    for (const policy of ["quarantine", "reject"]) {
      const impact = await handle.get(`policy_impact?${period}&policy=${policy}&per_page=1000`, key);
      expect(impact.status, impact.body).toBe(200);
      bodies[`policy_impact ${policy}`] = impact.json;
    }
    return bodies;
  };

  /** What every endpoint must answer over `kept`, the rows of the tenant's one domain `owner`. */
  const expected = (kept: SenderRow[], owner: string, group: string | null) => {
    const list = <T>(records: T[]) => ({ status: "SUCCESS", total: records.length, records });
    const byDomain = [...groupBy(kept, (row) => row.domain)]
      .map(([Domain, group]) => ({ Domain, ...countersOf(group) }))
      .sort(byVolumeThenKey((record) => [record.Domain]));
    const byOrganization = [...groupBy(kept, (row) => row.organization)]
      .map(([Organization, group]) => ({ Organization, ...countersOf(group) }))
      .sort(byVolumeThenKey((record) => [record.Organization]));
    const senders = expectedSenders(kept, () => owner, senderOf, noApprovals);
    const impact = (policy: "quarantine" | "reject") => ({
      status: "SUCCESS",
      policy,
      ...expectedPolicyImpact(kept, policy, () => owner, senderOf, noApprovals),
    });
    return {
      aggregate_by_domain: list(byDomain),
      aggregate_by_domain_group: list(
        group && kept.length > 0 ? [{ DomainGroup: group, ...countersOf(kept) }] : [],
      ),
      aggregate_by_organization: list(byOrganization),
      aggregate_by_source: list(expectedSourceRecords(kept, false, sourceOf)),
      aggregate_by_unaligned_source: list(expectedSourceRecords(kept, true, sourceOf)),
      aggregate_by_sender: list(senders),
      aggregate_by_date: list(
        expectedSeries(kept, at("2024-01-20T00:00:00Z"), at("2024-04-05T23:59:59Z"), "day"),
      ),
      "policy_impact quarantine": impact("quarantine"),
      "policy_impact reject": impact("reject"),
    };
  };

  const replay = () =>
    rebuildBeside({
      store: handle.runtime.store,
      db: handle.runtime.db,
      projections: allProjections,
      concurrentSessions: handle.runtime.database.concurrentSessions,
    });

  beforeAll(async () => {
    backend = await makeBackend();
    acme = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out);
    other = JSON.parse((await cli(backend.env, "tenant", "create", "other", "--json")).out);
    const files = [...corpusFiles];
    for (const [name, xml] of Object.entries(generated)) {
      const file = join(tmp, `${name}.xml`);
      writeFileSync(file, xml);
      files.push(file);
    }
    rows = files.flatMap((file) => readSenderRows(file));
    const imported = await cli(backend.env, "import", ...files);
    expect(imported.code, imported.err).toBe(0);
    handle = await startTestService({
      ...backend.env,
      RATE_LIMIT_PER_SECOND: "100000",
      RATE_LIMIT_BURST: "100000",
      // The service's job asks every second: were it not held off, it would expire at today's date.
      RETENTION_INTERVAL_MS: "1000",
    });
    // Retention here runs at the test's date (2 April 2024), never at today's by the service's job.
    await holdRetentionLease(handle.runtime.db);
    expect((await handle.put("add_domain", acme.apiKey, { domain: "example.com" })).status).toBe(200);
    expect((await handle.put("add_domain", other.apiKey, { domain: "example.de" })).status).toBe(200);
    expect(
      (await handle.put("domain_group", acme.apiKey, { domain: "example.com", group: "Brands" })).status,
    ).toBe(200);
    await waitForEverySourceNamed(handle.runtime);
    namings = await serviceNamings(handle.runtime.db);
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("before: every endpoint answers over every report", async () => {
    const acmeRows = rows.filter(isAcme);
    // Reports on both sides of the cutoff, the spanning one and a subdomain among them.
    expect(acmeRows.some((row) => row.begin < at(`${cutoffDay}T00:00:00Z`))).toBe(true);
    expect(acmeRows.some((row) => row.begin >= at(`${cutoffDay}T00:00:00Z`))).toBe(true);
    expect(await answers(acme.apiKey)).toEqual(expected(partsKept(acmeRows, null), "example.com", "Brands"));
    const otherRows = rows.filter((row) => row.domain === "example.de");
    expect(await answers(other.apiKey)).toEqual(expected(partsKept(otherRows, null), "example.de", null));
  });

  it("aggregate_days: a number of days or keep, through the API; out of range refused", async () => {
    const set = await handle.put("update_personal_data_policy", acme.apiKey, { aggregate_days: "30" });
    expect(set.status).toBe(200);
    expect(set.json).toMatchObject({ aggregate_days: 30, failure_report_days: 90 });
    expect((await handle.get("personal_data_policy", acme.apiKey)).json).toMatchObject({
      aggregate_days: 30,
    });
    for (const wrong of ["0", "3651", "forever", "-1"]) {
      const refused = await handle.put("update_personal_data_policy", other.apiKey, {
        aggregate_days: wrong,
      });
      expect(refused.status, wrong).toBe(400);
    }
    const kept = await handle.put("update_personal_data_policy", other.apiKey, { aggregate_days: "keep" });
    expect(kept.status).toBe(200);
    expect(kept.json).toMatchObject({ aggregate_days: null });
  });

  it("retention: the facts before the cutoff day go, every endpoint answers over the kept ones only", async () => {
    const acmeRows = rows.filter(isAcme);
    const gone = partsKept(acmeRows, null).filter(
      (part) => new Date(part.begin * 1000).toISOString().slice(0, 10) < cutoffDay,
    );
    const done = await applyRetention(handle.runtime, now);
    expect(done.aggregates.map((run) => run.event.tenantId)).toEqual([acme.tenantId]);
    const event = done.aggregates[0]!.event;
    expect(event.before).toBe(cutoffDay);
    expect(event.domains).toEqual(["example.com", "mail.example.com"]);
    expect(event.removed.messages).toBe(gone.reduce((sum, part) => sum + part.count, 0));
    expect(event.removed.rows.agg_domain_day).toBe(
      new Set(gone.map((part) => `${part.domain} ${new Date(part.begin * 1000).toISOString().slice(0, 10)}`))
        .size,
    );
    for (const table of ["agg_domain", "agg_organization", "agg_source", "agg_sender_fact"])
      expect(event.removed.rows[table], table).toBeGreaterThan(0);
    await catchUp({ store: handle.runtime.store, db: handle.runtime.db, projections: allProjections });

    // The answers asked before are kept in the API's answer cache: these must be new ones.
    expect(await answers(acme.apiKey)).toEqual(
      expected(partsKept(acmeRows, cutoffDay), "example.com", "Brands"),
    );
    // The other tenant keeps its facts: as old as acme's that went, still there.
    const otherRows = rows.filter((row) => row.domain === "example.de");
    expect(await answers(other.apiKey)).toEqual(expected(partsKept(otherRows, null), "example.de", null));

    // The history: the event with its counts, and the run's totals.
    const history = await handle.runtime.store.readStream(streams.personalData(acme.tenantId));
    expect(history.map((recorded) => [recorded.type, recorded.data])).toEqual([
      ["AggregateFactsExpired", event],
    ]);
    const runs = await handle.runtime.store.readStream(streams.retentionRuns());
    const rowsRemoved = Object.values(event.removed.rows).reduce((sum, n) => sum + n, 0);
    expect(runs.at(-1)?.data).toMatchObject({ removed: { aggregateRows: rowsRemoved } });

    // Run again at the same time: nothing is left to expire, no second event.
    const again = await applyRetention(handle.runtime, now);
    expect(again.aggregates).toEqual([]);
  });

  it("a replay of every projection answers the same, the expiry applied at its place in the history", async () => {
    const acmeBefore = await answers(acme.apiKey);
    const otherBefore = await answers(other.apiKey);
    await replay();
    expect(await answers(acme.apiKey)).toEqual(acmeBefore);
    expect(await answers(other.apiKey)).toEqual(otherBefore);
  });

  it("the commands: tenant policy --aggregate-days, then retention run says what went", async () => {
    // Today, a thousand days back reaches past all of the other tenant's reports (2018, Feb 2024).
    const set = await cli(backend.env, "tenant", "policy", "other", "--aggregate-days", "1000");
    expect(set.code, set.err).toBe(0);
    expect(set.out).toContain("aggregate facts: 1000 days");
    const run = await cli(backend.env, "retention", "run");
    expect(run.code, run.err).toBe(0);
    const before = aggregateCutoffDay(new Date(), 1000);
    expect(run.out).toMatch(
      new RegExp(
        `^${other.tenantId}: aggregate facts before ${before} of 1 report domains, 7 messages \\(\\d+ read-model rows\\)$`,
        "m",
      ),
    );
    expect((await handle.get(`aggregate_by_domain?${period}`, other.apiKey)).json).toEqual({
      status: "SUCCESS",
      total: 0,
      records: [],
    });
  });

  it("tenant policy --aggregate-days: sets days or keep", async () => {
    const set = await cli(backend.env, "tenant", "policy", "acme", "--aggregate-days", "400");
    expect(set.code, set.err).toBe(0);
    expect(set.out).toContain("aggregate facts: 400 days");
    const keep = await cli(backend.env, "tenant", "policy", "acme", "--aggregate-days", "keep");
    expect(keep.code, keep.err).toBe(0);
    expect(keep.out).toContain("aggregate facts: kept");
    const wrong = await cli(backend.env, "tenant", "policy", "acme", "--aggregate-days", "0");
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain("--aggregate-days");
  });
});
