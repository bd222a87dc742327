/**
 * examples/rebuild-daily-counts, run as its users run it, against the service over real reports:
 * its per-domain daily counts, rebuilt from the events alone, equal aggregate_by_date's, after a
 * domain is added whose reports arrived before, after the tenant's personal data is erased, and
 * read from NATS JetStream as from GET events.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateCorpus, failureCorpus } from "../support/corpus.js";
import { deleteStream, natsUrl, streamMessages } from "../support/nats-stream.js";
import {
  type Backend,
  backends,
  cli,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { waitForEverySourceNamed } from "../support/sources-named.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const program = join(root, "examples/rebuild-daily-counts/src/main.ts");
const run = promisify(execFile);

const reports = [
  "addisonfoods.com!example.com!1536105600!1536191999.xml",
  "example.net!example.com!1529366400!1529452799.xml",
  "veeam.com!example.com!1530133200!1530219600.xml",
  "protection.outlook.com!example.com!1711756800!1711843200.xml",
  "!large-example.com!1711897200!1711983600.xml",
  "ikea.com!example.de!1538690400!1538776800.xml",
].map((name) => `${aggregateCorpus}${name}`);

type Counts = Record<string, Record<string, number>>;
const DAY = 86_400;

describe.each(backends)("the rebuild-daily-counts example on %s", (_name, makeBackend) => {
  const tag = randomBytes(4).toString("hex");
  const stream = `DLT_EXAMPLE_${tag}`;
  const prefix = `dlt-example-${tag}`;
  let backend: Backend;
  let handle: ServiceHandle;
  let acme: { tenantId: string; apiKey: string };
  const tmp = mkdtempSync(join(tmpdir(), "dl-example-"));

  /** Runs the program once to the end of the feed and returns the counts it printed. */
  const rebuild = async (store: string, ...extra: string[]): Promise<Counts> => {
    const { stdout } = await run(
      process.execPath,
      [
        "--import",
        "tsx",
        program,
        "--api",
        handle.service.apiRoot,
        "--key",
        acme.apiKey,
        "--store",
        join(tmp, store),
        "--once",
        "--print",
        ...extra,
      ],
      { cwd: root, timeout: 120_000 },
    );
    return JSON.parse(stdout) as Counts;
  };

  /** aggregate_by_date's messages per day for each domain, the days with none left out. */
  const served = async (domains: string[], days: string[]): Promise<Counts> => {
    const counts: Counts = {};
    const seconds = days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000).sort((a, b) => a - b);
    for (const domain of domains) {
      counts[domain] = {};
      for (let start = seconds[0]!; start <= seconds.at(-1)!; start += 1000 * DAY) {
        const end = Math.min(start + 1000 * DAY, seconds.at(-1)! + DAY) - 1;
        const answer = (
          await handle.get(
            `aggregate_by_date?domain=${domain}&start=${start}&end=${end}&per_page=1000`,
            acme.apiKey,
          )
        ).json as { records: { Date: string; Volume: string }[] };
        for (const record of answer.records)
          if (record.Volume !== "0") counts[domain][record.Date] = Number(record.Volume);
      }
    }
    return counts;
  };

  const expectEqualToServed = async (counts: Counts) => {
    const domains = (
      (await handle.get("domains?per_page=1000", acme.apiKey)).json as { records: { Domain: string }[] }
    ).records.map((record) => record.Domain);
    expect(Object.keys(counts).sort()).toEqual(domains.sort());
    const days = Object.values(counts).flatMap((perDay) => Object.keys(perDay));
    expect(days.length).toBeGreaterThan(0);
    expect(counts).toEqual(await served(domains, days));
  };

  beforeAll(async () => {
    backend = await makeBackend();
    acme = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out);
    expect((await cli(backend.env, "domain", "add", "acme", "example.com")).code).toBe(0);
    const imported = await cli(
      backend.env,
      "import",
      ...reports,
      `${failureCorpus}dmarc_ruf_report_linkedin.eml`,
    );
    expect(imported.code, imported.err).toBe(0);
    handle = await startTestService({
      ...backend.env,
      EVENTS_NATS_URL: natsUrl,
      EVENTS_NATS_STREAM: stream,
      EVENTS_NATS_SUBJECT_PREFIX: prefix,
      RATE_LIMIT_PER_SECOND: "100000",
      RATE_LIMIT_BURST: "100000",
    });
    // The service names the reports' sources in the background (SourceIpResolved, thousands of
    // events the feed's index steps over): the program runs `--once`, so it reads once the feed
    // has caught up with them, as a consumer reading to the end at that moment would.
    await waitForEverySourceNamed(handle.runtime);
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
    await deleteStream(stream);
    rmSync(tmp, { recursive: true, force: true });
  });

  it("rebuilds aggregate_by_date from the feed, through a later domain and an erasure, and from NATS", async () => {
    const first = await rebuild("http.json");
    expect(Object.keys(first)).toEqual(["example.com"]);
    await expectEqualToServed(first);

    // example.de's report arrived before acme had the domain: the program reads it by domain.
    const added = await handle.put("add_domain", acme.apiKey, { domain: "example.de" });
    expect(added.status, JSON.stringify(added.json)).toBe(200);
    // `--once` reads to the end of the feed as it is: its index has the DomainAdded once every
    // projection has caught up (a tailing consumer gets it when it comes).
    await waitForEverySourceNamed(handle.runtime);
    const second = await rebuild("http.json");
    expect(Object.keys(second["example.de"] ?? {})).not.toHaveLength(0);
    await expectEqualToServed(second);

    const erased = await cli(backend.env, "tenant", "erase", "acme", "--confirm", acme.tenantId);
    expect(erased.code, erased.err).toBe(0);
    const third = await rebuild("http.json");
    await expectEqualToServed(third);

    // From NATS, once the publisher has sent every event of acme's feed: the same counts.
    let fed = 0;
    for (let after = ""; ; ) {
      const page = (await handle.get(`events?limit=1000${after && `&after=${after}`}`, acme.apiKey)).json as {
        events: unknown[];
        next: string;
      };
      if (page.events.length === 0) break;
      fed += page.events.length;
      after = page.next;
    }
    const subject = `${prefix}.${acme.tenantId}.>`;
    await expect
      .poll(
        async () =>
          (await streamMessages(stream)).filter((m) => m.subject.startsWith(`${prefix}.${acme.tenantId}.`))
            .length,
        {
          timeout: 60_000,
        },
      )
      .toBeGreaterThanOrEqual(fed);
    const fromNats = await rebuild("nats.json", "--nats", natsUrl, "--stream", stream, "--subject", subject);
    expect(fromNats).toEqual(third);
  });
});
