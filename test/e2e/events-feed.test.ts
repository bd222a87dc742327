import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unfedTypes } from "@dmarc-ledger/event-feed";
import { eventTypes } from "@dmarc-ledger/events";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateCorpus, failureCorpus } from "../support/corpus.js";
import {
  type Backend,
  backends,
  cli,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { waitForEverySourceNamed } from "../support/sources-named.js";

interface FeedEvent {
  specversion: string;
  id: string;
  source: string;
  type: string;
  time: string;
  subject: string;
  datacontenttype: string;
  dataversion: number;
  cursor: string;
  data: Record<string, unknown>;
}
interface FeedAnswer {
  status: string;
  events: FeedEvent[];
  next: string;
}

const period = "start=0&end=2000000000";
// Real reports: example.com's aggregate reports and LinkedIn's failure report about it; IKEA's
// aggregate report about example.de; a failure report about domain.de.
const exampleComReports = [
  "addisonfoods.com!example.com!1536105600!1536191999.xml",
  "example.net!example.com!1529366400!1529452799.xml",
  "veeam.com!example.com!1530133200!1530219600.xml",
].map((name) => `${aggregateCorpus}${name}`);
const exampleDeReport = `${aggregateCorpus}ikea.com!example.de!1538690400!1538776800.xml`;
const exampleComFailure = `${failureCorpus}dmarc_ruf_report_linkedin.eml`;
const domainDeFailure = `${failureCorpus}DMARC Failure Report for domain.de (mail-from=sharepoint@domain.de, ip=10.10.10.10).eml`;

describe.each(backends)("GET events on %s", (_name, makeBackend) => {
  let backend: Backend;
  let handle: ServiceHandle;
  let acme: { tenantId: string; apiKey: string };
  let beta: { tenantId: string; apiKey: string };
  const tmp = mkdtempSync(join(tmpdir(), "dl-feed-"));

  const feed = async (key: string, query: string): Promise<FeedAnswer> => {
    const response = await handle.get(`events?${query}`, key);
    expect(response.status, response.body).toBe(200);
    return response.json as FeedAnswer;
  };
  /** The whole feed, page by page, from `after` (or the start). */
  const wholeFeed = async (key: string, limit: number, after?: string): Promise<FeedEvent[]> => {
    const events: FeedEvent[] = [];
    let cursor = after;
    for (;;) {
      const page = await feed(key, `limit=${limit}${cursor === undefined ? "" : `&after=${cursor}`}`);
      if (page.events.length === 0) return events;
      events.push(...page.events);
      cursor = page.next;
    }
  };

  beforeAll(async () => {
    backend = await makeBackend();
    acme = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out);
    beta = JSON.parse((await cli(backend.env, "tenant", "create", "beta", "--json")).out);
    expect((await cli(backend.env, "domain", "add", "acme", "example.com")).code).toBe(0);
    expect((await cli(backend.env, "domain", "add", "beta", "domain.de")).code).toBe(0);
    // example.de's report arrives while no tenant has the domain: beta adds it later.
    const imported = await cli(
      backend.env,
      "import",
      ...exampleComReports,
      exampleDeReport,
      exampleComFailure,
      domainDeFailure,
    );
    expect(imported.code, imported.err).toBe(0);
    handle = await startTestService({
      ...backend.env,
      RATE_LIMIT_PER_SECOND: "100000",
      RATE_LIMIT_BURST: "100000",
    });
    // The service names the reports' sources in the background, thousands of events the feed's
    // index steps over: the tests read the feed's end once it has caught up with them.
    await waitForEverySourceNamed(handle.runtime);
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("gives the tenant's events in order as CloudEvents; resuming from any cursor gives exactly the rest", async () => {
    const all = await wholeFeed(acme.apiKey, 1000);
    expect(all.map((event) => event.type)).toEqual(
      expect.arrayContaining(["TenantCreated", "ApiKeyIssued", "DomainAdded", "AggregateReportReceived"]),
    );
    expect(all.filter((event) => event.type === "AggregateReportReceived")).toHaveLength(3);
    expect(all.filter((event) => event.type === "ForensicReportReceived")).toHaveLength(1);
    expect(new Set(all.map((event) => event.id)).size).toBe(all.length);
    for (const event of all) {
      expect(event).toMatchObject({
        specversion: "1.0",
        source: handle.service.apiRoot,
        datacontenttype: "application/json",
      });
      expect(Number.isNaN(Date.parse(event.time))).toBe(false);
    }
    expect(all.find((event) => event.type === "TenantCreated")!.subject).toBe(acme.tenantId);
    expect(all.find((event) => event.type === "AggregateReportReceived")!.subject).toBe("example.com");
    // The background processes (alerts, Safe SPF) may append while this runs: a read begins
    // with what an earlier one gave, and never gives an event twice or one before its cursor.
    const startsWithAll = (events: FeedEvent[], expected: FeedEvent[]) => {
      expect(events.slice(0, expected.length).map((event) => event.id)).toEqual(
        expected.map((event) => event.id),
      );
      expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
    };
    // One by one, the same events in the same order.
    startsWithAll(await wholeFeed(acme.apiKey, 1), all);
    // From each event's cursor: exactly the events after it, no gap, no duplicate.
    for (const [index, event] of all.entries()) {
      const rest = await wholeFeed(acme.apiKey, 1000, event.cursor);
      startsWithAll(rest, all.slice(index + 1));
      const before = new Set(all.slice(0, index + 1).map((earlier) => earlier.id));
      expect(rest.filter((later) => before.has(later.id))).toEqual([]);
    }
    // The end: an empty page whose next is where it was asked from.
    const last = (await wholeFeed(acme.apiKey, 1000)).at(-1)!;
    const end = await feed(acme.apiKey, `after=${last.cursor}`);
    if (end.events.length === 0) expect(end).toEqual({ status: "SUCCESS", events: [], next: last.cursor });
    else expect(end.next).toBe(end.events.at(-1)!.cursor);
    // Ids are the store's: a second read gives the same ones.
    startsWithAll(await wholeFeed(acme.apiKey, 7), all);
  });

  it("refuses bad parameters with 400 and another tenant's domain with 404", async () => {
    for (const query of [
      "limit=0",
      "limit=1001",
      "limit=x",
      "wait=31",
      "after=nope",
      "after=djE6LTE",
      "domain=example.de",
      "before=djE6c3RhcnQ",
      "page=1",
    ]) {
      const response = await handle.get(`events?${query}`, acme.apiKey);
      expect(response.status, query).toBe(400);
    }
    const head = await feed(acme.apiKey, "limit=1");
    const notOurs = await handle.get(`events?domain=domain.de&before=${head.next}`, acme.apiKey);
    expect(notOurs.status).toBe(404);
  });

  it("keeps tenants apart: another tenant's events never appear", async () => {
    const acmeEvents = await wholeFeed(acme.apiKey, 1000);
    const betaEvents = await wholeFeed(beta.apiKey, 1000);
    const acmeIds = new Set(acmeEvents.map((event) => event.id));
    expect(betaEvents.filter((event) => acmeIds.has(event.id))).toEqual([]);
    for (const [tenant, events] of [
      [acme, acmeEvents],
      [beta, betaEvents],
    ] as const) {
      for (const event of events) {
        if ("tenantId" in event.data) expect(event.data.tenantId).toBe(tenant.tenantId);
      }
    }
    expect(
      new Set(acmeEvents.filter((e) => e.type.endsWith("ReportReceived")).map((e) => e.subject)),
    ).toEqual(new Set(["example.com"]));
    // Beta's domain.de failure report is beta's; example.de's report came before beta had it.
    expect(betaEvents.filter((e) => e.type.endsWith("ReportReceived")).map((e) => e.subject)).toEqual([
      "domain.de",
    ]);
  });

  it("a domain added later: DomainAdded in the feed, its earlier reports by domain= before its cursor", async () => {
    const tail = await feed(beta.apiKey, "limit=1000");
    const waiting = feed(beta.apiKey, `after=${tail.next}&wait=30`);
    const added = await handle.put("add_domain", beta.apiKey, { domain: "example.de" });
    expect(added.status, JSON.stringify(added.json)).toBe(200);
    // The long poll answered with the first event the write appended (adding a domain claims
    // it in its tree, DomainReserved, then adds it, DomainAdded).
    const woken = await waiting;
    expect(woken.events.length, JSON.stringify(woken)).toBeGreaterThan(0);
    expect(woken.events[0]!.subject).toBe("example.de");
    const domainAdded = [...woken.events, ...(await wholeFeed(beta.apiKey, 1000, woken.next))].find(
      (event) => event.type === "DomainAdded" && event.data.domain === "example.de",
    );
    expect(domainAdded).toBeDefined();
    // The report that arrived before is not in the tail...
    const after = await wholeFeed(beta.apiKey, 1000, tail.next);
    expect(after.filter((event) => event.type === "AggregateReportReceived")).toEqual([]);
    // ...but by domain, before the DomainAdded's cursor, exactly once.
    const earlier: FeedEvent[] = [];
    let cursor = "";
    for (;;) {
      const page = await feed(
        beta.apiKey,
        `domain=example.de&before=${domainAdded!.cursor}&limit=1${cursor && `&after=${cursor}`}`,
      );
      if (page.events.length === 0) break;
      earlier.push(...page.events);
      cursor = page.next;
    }
    expect(earlier.map((event) => [event.type, event.subject, event.data.orgName])).toEqual([
      ["AggregateReportReceived", "example.de", "ikea.com"],
    ]);
    // Acme cannot read it, not even by domain.
    expect(
      (await handle.get(`events?domain=example.de&before=${domainAdded!.cursor}`, acme.apiKey)).status,
    ).toBe(404);
  });

  it("shows personal data as /forensic does, by the policy; (removed) after erasure; never a secret", async () => {
    const shown = async () =>
      (await wholeFeed(acme.apiKey, 1000))
        .filter((event) => event.type === "ForensicReportReceived")
        .map((event) => event.data.personal as { subject: string; headers: string });
    const forensic = async () =>
      (
        (await handle.get(`forensic?${period}`, acme.apiKey)).json as {
          records: { Subject: string; Headers: string }[];
        }
      ).records;
    // Redaction on (the default): subject removed, addresses masked, exactly as /forensic.
    const redacted = await shown();
    const redactedRecords = await forensic();
    expect(redacted).toEqual(
      redactedRecords.map((record) => ({ subject: record.Subject, headers: record.Headers })),
    );
    expect(redacted[0]!.subject).toBe("(removed)");
    expect(redacted[0]!.headers).toContain("*****@");
    // Redaction off: opened.
    expect((await handle.put("update_personal_data_policy", acme.apiKey, { redaction: "off" })).status).toBe(
      200,
    );
    const opened = await shown();
    const openedRecords = await forensic();
    expect(opened).toEqual(
      openedRecords.map((record) => ({ subject: record.Subject, headers: record.Headers })),
    );
    expect(opened[0]!.subject).not.toBe("(removed)");
    expect(opened[0]!.headers).not.toBe(redacted[0]!.headers);

    // Nothing sealed, no key hash, no key, for every event type the feed carries.
    const body = (await handle.get("events?limit=1000", acme.apiKey)).body;
    const keyHash = createHash("sha256").update(acme.apiKey).digest("hex");
    for (const secret of [keyHash, acme.apiKey, '"sealed"', "keyHash", '"clear"'])
      expect(body).not.toContain(secret);
    for (const event of (JSON.parse(body) as FeedAnswer).events)
      expect(unfedTypes.has(event.type as never)).toBe(false);

    // Erasure: the event stays, its personal fields read (removed), as /forensic would show them.
    const erased = await cli(backend.env, "tenant", "erase", "acme", "--confirm", acme.tenantId);
    expect(erased.code, erased.err).toBe(0);
    expect(await shown()).toEqual([{ subject: "(removed)", headers: "(removed)" }]);
  });

  it("every response satisfies the OpenAPI document, which has a schema for every fed type", async () => {
    const doc = (await handle.get("openapi.json", acme.apiKey)).json as {
      components: { schemas: Record<string, object> };
    };
    for (const type of eventTypes) {
      if (unfedTypes.has(type)) continue;
      expect(
        Object.keys(doc.components.schemas).some((name) => name.startsWith(`FeedEvent_${type}_v`)),
        type,
      ).toBe(true);
    }
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    for (const [name, schema] of Object.entries(doc.components.schemas))
      ajv.addSchema(schema, `#/components/schemas/${name}`);
    const check = ajv.getSchema("#/components/schemas/Response_events")!;
    for (const key of [acme.apiKey, beta.apiKey]) {
      const answer = (await handle.get("events?limit=1000", key)).json;
      expect(check(answer), JSON.stringify(check.errors)).toBe(true);
    }
  });
});
