/**
 * GET aggregate_by_date against an independent computation from the same report files
 * (test/support/independent-series.ts): reports split over days, empty days, ISO weeks and
 * months across a year boundary, the domain and group filters, paging, tenants, the refusal of
 * too many buckets, and a replay giving the same bytes; on PGlite and on PostgreSQL.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateCorpus } from "../support/corpus.js";
import { readSimpleRows, type SimpleRow } from "../support/independent-aggregate.js";
import { type Bucket, expectedSeries, type SeriesRecord } from "../support/independent-series.js";
import { aggregateReportXml } from "../support/report-xml.js";
import {
  type Backend,
  backends,
  cli,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { waitForEverySourceNamed } from "../support/sources-named.js";

const at = (date: string, time = "00:00:00") => Date.parse(`${date}T${time}Z`) / 1000;

/**
 * Reports chosen for the series' edges. Counts are not multiples of the days they span, so the
 * split has remainders to place.
 */
const generated = [
  // Three and a half days across the new year: split 18 h / 24 h / 24 h / 18 h.
  aggregateReportXml({
    reportId: "series-new-year",
    domain: "alpha-series.com",
    organization: "google.com",
    begin: at("2023-12-30", "06:00:00"),
    end: at("2024-01-02", "18:00:00"),
    rows: [
      { sourceIp: "192.0.2.1", count: 1001 },
      { sourceIp: "192.0.2.2", count: 7, dkim: "fail", spf: "fail", disposition: "quarantine" },
      { sourceIp: "192.0.2.3", count: 3, dkim: "fail", spf: "fail", disposition: "reject" },
      { sourceIp: "192.0.2.4", count: 5, dkim: "fail", spf: "pass", disposition: "none" },
    ],
  }),
  // One day; a disposition word outside the spec's three counts in none of them.
  aggregateReportXml({
    reportId: "series-one-day",
    domain: "alpha-series.com",
    organization: "yahoo.com",
    begin: at("2024-01-05"),
    end: at("2024-01-05", "23:59:59"),
    rows: [
      { sourceIp: "192.0.2.5", count: 40, disposition: "Reject", dkim: "fail", spf: "fail" },
      { sourceIp: "192.0.2.6", count: 2, disposition: "pass" },
    ],
  }),
  // A subdomain's, of 24 hours from noon: all of it on the day it begins.
  aggregateReportXml({
    reportId: "series-subdomain",
    domain: "mail.alpha-series.com",
    organization: "outlook.com",
    begin: at("2024-01-20", "12:00:00"),
    end: at("2024-01-21", "12:00:00"),
    rows: [{ sourceIp: "192.0.2.7", count: 13, dkim: "fail", spf: "fail", disposition: "quarantine" }],
  }),
  // Exactly 24 hours on the last day of the year.
  aggregateReportXml({
    reportId: "series-bravo-eve",
    domain: "bravo-series.com",
    organization: "google.com",
    begin: at("2023-12-31"),
    end: at("2024-01-01"),
    rows: [{ sourceIp: "198.51.100.1", count: 21 }],
  }),
  // Four days across the end of a leap February: equal shares, ties to the earlier days.
  aggregateReportXml({
    reportId: "series-bravo-leap",
    domain: "bravo-series.com",
    organization: "google.com",
    begin: at("2024-02-27"),
    end: at("2024-03-02"),
    rows: [
      { sourceIp: "198.51.100.2", count: 10 },
      { sourceIp: "198.51.100.3", count: 3, dkim: "fail", spf: "fail", disposition: "reject" },
    ],
  }),
  // Another tenant's, in the same days.
  aggregateReportXml({
    reportId: "series-charlie",
    domain: "charlie-series.com",
    organization: "google.com",
    begin: at("2024-01-01"),
    end: at("2024-01-03"),
    rows: [{ sourceIp: "203.0.113.1", count: 500, disposition: "quarantine", dkim: "fail", spf: "fail" }],
  }),
];

const corpusFiles = [
  "!example.com!1538204542!1538463818.xml",
  "!large-example.com!1711897200!1711983600.xml",
  "protection.outlook.com!example.com!1711756800!1711843200.xml",
  "rfc9990-example.net!example.com!1700000000!1700086399.xml",
  "old_draft_from_wiki.xml",
  "veeam.com!example.com!1530133200!1530219600.xml",
].map((name) => `${aggregateCorpus}${name}`);

const under = (row: SimpleRow, domain: string) => row.domain === domain || row.domain.endsWith(`.${domain}`);

interface SeriesAnswer {
  status: string;
  total: number;
  records: SeriesRecord[];
}

describe.each(backends)("aggregate_by_date on %s", (_name, makeBackend) => {
  let backend: Backend;
  let handle: ServiceHandle;
  let acme: string;
  let other: string;
  let rows: SimpleRow[];
  const tmp = mkdtempSync(join(tmpdir(), "dl-series-"));

  const acmeRows = () =>
    rows.filter((row) => ["alpha-series.com", "bravo-series.com", "example.com"].some((d) => under(row, d)));

  const series = async (key: string, params: string) => {
    const response = await handle.get(`aggregate_by_date?${params}`, key);
    expect(response.status, response.body).toBe(200);
    return response.json as SeriesAnswer;
  };

  beforeAll(async () => {
    backend = await makeBackend();
    const files = generated.map((xml, index) => {
      const file = join(tmp, `generated-${index}.xml`);
      writeFileSync(file, xml);
      return file;
    });
    rows = [...files, ...corpusFiles].flatMap((file) => readSimpleRows(file));
    acme = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out).apiKey;
    other = JSON.parse((await cli(backend.env, "tenant", "create", "other", "--json")).out).apiKey;
    const imported = await cli(backend.env, "import", ...files, ...corpusFiles);
    expect(imported.code, imported.err).toBe(0);
    handle = await startTestService(backend.env);
    for (const domain of ["alpha-series.com", "bravo-series.com", "example.com"]) {
      expect((await handle.put("add-domain", acme, { domain })).status).toBe(200);
    }
    expect((await handle.put("add-domain", other, { domain: "charlie-series.com" })).status).toBe(200);
    expect(
      (await handle.put("domain_group", acme, { domain: "alpha-series.com", group: "Brands" })).status,
    ).toBe(200);
    // The service names the reports' sources in the background; on a loaded machine a PGlite
    // projector busy with those names can hold the writes above past their read-your-writes wait.
    await waitForEverySourceNamed(handle.runtime);
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("has every day of the period, reports split over the days they cover, empty days zero", async () => {
    const start = at("2023-12-25");
    const end = at("2024-03-05", "23:59:59");
    const answer = await series(acme, `start=${start}&end=${end}&per_page=1000`);
    const expected = expectedSeries(acmeRows(), start, end, "day");
    expect(answer).toEqual({ status: "SUCCESS", total: expected.length, records: expected });
    expect(expected.length).toBe(72);
    // The new-year report's 1001 passing messages, 18/84, 24/84, 24/84 and 18/84 of them.
    const newYear = answer.records.filter((r) => r.Date >= "2023-12-30" && r.Date <= "2024-01-02");
    expect(newYear.map((r) => r.Date)).toEqual(["2023-12-30", "2023-12-31", "2024-01-01", "2024-01-02"]);
    expect(answer.records.find((r) => r.Date === "2023-12-26")!.Volume).toBe("0");
    // The one-day report: "Reject" counted as reject, "pass" in none of the three.
    const fifth = answer.records.find((r) => r.Date === "2024-01-05")!;
    expect([fifth.Volume, fifth.DispositionReject, fifth.DispositionNone]).toEqual(["42", "40", "0"]);
  });

  it("adds up, over whole days, to what aggregate_by_domain counts", async () => {
    const start = at("2023-12-25");
    const end = at("2024-03-05", "23:59:59");
    const answer = await series(acme, `start=${start}&end=${end}&per_page=1000`);
    const byDomain = (await handle.get(`aggregate_by_domain?start=${start}&end=${end}`, acme)).json as {
      records: { Volume: string }[];
    };
    const sum = (values: string[]) => values.reduce((total, value) => total + Number(value), 0);
    expect(sum(answer.records.map((r) => r.Volume))).toBe(sum(byDomain.records.map((r) => r.Volume)));
    expect(sum(answer.records.map((r) => r.Volume))).toBeGreaterThan(0);
  });

  it.each<[Bucket, string, string, number]>([
    // From a Thursday: the first week starts on the Monday before, and holds all of its days.
    ["week", "2023-12-28", "2024-01-09", 3],
    ["month", "2023-11-15", "2024-03-10", 5],
    ["week", "2018-01-01", "2024-12-31", 366],
    ["month", "2018-01-01", "2024-12-31", 84],
  ])(
    "by %s from %s to %s: ISO weeks and calendar months across the year's end",
    async (bucket, from, to, count) => {
      const start = at(from);
      const end = at(to, "23:59:59");
      const answer = await series(acme, `start=${start}&end=${end}&bucket=${bucket}&per_page=1000`);
      const expected = expectedSeries(acmeRows(), start, end, bucket);
      expect(expected.length).toBe(count);
      expect(answer).toEqual({ status: "SUCCESS", total: count, records: expected });
    },
  );

  it("narrows to a domain (with its subdomains) or a group, and refuses others'", async () => {
    const start = at("2023-12-01");
    const end = at("2024-02-29", "23:59:59");
    const period = `start=${start}&end=${end}&per_page=1000&bucket=week`;
    const alpha = expectedSeries(
      rows.filter((row) => under(row, "alpha-series.com")),
      start,
      end,
      "week",
    );
    expect((await series(acme, `${period}&domain=Alpha-Series.com`)).records).toEqual(alpha);
    expect((await series(acme, `${period}&group=Brands`)).records).toEqual(alpha);
    const bravo = expectedSeries(
      rows.filter((row) => under(row, "bravo-series.com")),
      start,
      end,
      "week",
    );
    expect((await series(acme, `${period}&domain=bravo-series.com`)).records).toEqual(bravo);
    const notTheirs = await handle.get(`aggregate_by_date?${period}&domain=charlie-series.com`, acme);
    expect([notTheirs.status, (notTheirs.json as { code: string }).code]).toEqual([404, "unknown_domain"]);
    const noGroup = await handle.get(`aggregate_by_date?${period}&group=Nobody`, acme);
    expect([noGroup.status, (noGroup.json as { code: string }).code]).toEqual([404, "unknown_group"]);
  });

  it("shows each tenant its own domains' mail only", async () => {
    const start = at("2023-12-30");
    const end = at("2024-01-04", "23:59:59");
    const theirs = await series(other, `start=${start}&end=${end}`);
    expect(theirs.records).toEqual(
      expectedSeries(
        rows.filter((row) => row.domain === "charlie-series.com"),
        start,
        end,
        "day",
      ),
    );
    expect(theirs.records.map((r) => r.Volume)).toEqual(["0", "0", "250", "250", "0", "0"]);
    const ours = await series(acme, `start=${start}&end=${end}`);
    expect(ours.records).toEqual(expectedSeries(acmeRows(), start, end, "day"));
  });

  it("pages through the buckets oldest first; every page says how many there are", async () => {
    const start = at("2023-12-25");
    const end = at("2024-03-05", "23:59:59");
    const whole = await series(acme, `start=${start}&end=${end}&per_page=1000`);
    const pages: SeriesRecord[] = [];
    for (let page = 1; page <= 11; page++) {
      const answer = await series(acme, `start=${start}&end=${end}&per_page=7&page=${page}`);
      expect(answer.total).toBe(72);
      expect(answer.records.length).toBe(page <= 10 ? 7 : 2);
      pages.push(...answer.records);
    }
    expect(pages).toEqual(whole.records);
    expect((await series(acme, `start=${start}&end=${end}&per_page=7&page=12`)).records).toEqual([]);
    // By default 100 to a page, as on every list endpoint.
    expect((await series(acme, `start=${start}&end=${at("2024-06-30")}`)).records.length).toBe(100);
  });

  it("refuses a period of more than 1,000 buckets, naming the coarser bucket", async () => {
    const refused = async (params: string) => {
      const response = await handle.get(`aggregate_by_date?${params}`, acme);
      expect(response.status).toBe(400);
      expect((response.json as { code: string }).code).toBe("invalid_parameter");
      return (response.json as { message: string }).message;
    };
    const days = `start=${at("2018-01-01")}&end=${at("2024-12-31")}`;
    expect(await refused(days)).toBe(
      'Parameter "bucket": the period from 2018-01-01 to 2024-12-31 has 2557 days; at most 1000 are served: ask for bucket=week, or a shorter period.',
    );
    expect(await refused(`start=0&end=${at("2024-01-01")}&bucket=week`)).toContain("ask for bucket=month");
    expect(await refused("start=0&end=9007199254740991&bucket=month")).toBe(
      'Parameter "bucket": the period from 1970-01-01 to after 9999-12-31 has 3425121383 months; at most 1000 are served: ask for a shorter period.',
    );
    expect(await refused(`${days}&bucket=year`)).toBe(
      'Parameter "bucket": must be one of day, week, month, not "year".',
    );
    // 1,000 days exactly is served.
    const thousand = await series(acme, `start=${at("2022-01-01")}&end=${at("2022-01-01") + 999 * 86_400}`);
    expect(thousand.total).toBe(1000);
  });

  it("has every day up to the end asked for, past the newest report, kept answers too", async () => {
    // The answer cache cuts a period's end to the newest fact; the series' days are not cut.
    const start = at("2024-12-01");
    const first = await handle.get(`aggregate_by_date?start=${start}&end=${at("2025-01-31")}`, acme);
    const again = await handle.get(`aggregate_by_date?start=${start}&end=${at("2025-01-31")}`, acme);
    expect(again.body).toBe(first.body);
    expect((first.json as SeriesAnswer).total).toBe(62);
    const longer = (await series(acme, `start=${start}&end=${at("2025-02-28")}&per_page=1000`)).records;
    expect(longer.length).toBe(90);
    expect(longer.at(-1)!.Date).toBe("2025-02-28");
    expect(longer).toEqual(expectedSeries(acmeRows(), start, at("2025-02-28"), "day"));
  });

  it("gives the same bytes after a replay of the event store", async () => {
    const paths = [
      `start=${at("2023-12-25")}&end=${at("2024-03-05")}&per_page=1000`,
      `start=${at("2018-01-01")}&end=${at("2024-12-31")}&bucket=week&per_page=1000`,
      `start=${at("2018-01-01")}&end=${at("2024-12-31")}&bucket=month&group=Brands`,
    ].map((params) => `aggregate_by_date?${params}`);
    const before = await Promise.all(paths.map(async (path) => (await handle.get(path, acme)).body));
    // PGlite is one process's: the replay runs while the service is stopped, on both backends.
    await handle.stop();
    const replayed = await cli(backend.env, "replay");
    expect(replayed.code, replayed.err).toBe(0);
    expect(replayed.out).toMatch(/^Rebuilt .*\baggregate_by_date\b.* from \d+ events/);
    handle = await startTestService(backend.env);
    const after = await Promise.all(paths.map(async (path) => (await handle.get(path, acme)).body));
    expect(after).toEqual(before);
    expect(JSON.parse(after[0]!).records.some((r: SeriesRecord) => r.Volume !== "0")).toBe(true);
  });
});
