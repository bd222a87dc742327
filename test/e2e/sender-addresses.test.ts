/**
 * A sender's addresses, whatever their rank among the domain's sources: aggregate_by_source with
 * `sender=` answers exactly the records of the sender's addresses, computed again from the report
 * file (parsedmarc's large example.com sample: 2,286 addresses, more than the 1,000 a request
 * holds), and the dashboard's address panel lists every one of them.
 */
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, openWatched, requireChromium, tableCells } from "../support/browser.js";
import { builtWeb } from "../support/built-processes.js";
import { aggregateCorpus } from "../support/corpus.js";
import { addPerson } from "../support/dashboard-session.js";
import { readSimpleRows } from "../support/independent-aggregate.js";
import { expectedSourceRecords } from "../support/independent-sources.js";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { type ServiceNaming, serviceNamings } from "../support/service-namings.js";
import { waitForEverySourceNamed } from "../support/sources-named.js";

const reportFile = `${aggregateCorpus}!large-example.com!1711897200!1711983600.xml`;
const period = "period=custom&from=2024-03-01&to=2024-04-30";
const password = "a long passphrase for the panel";

interface SenderRecord {
  Domain: string;
  Service: string;
  SourceIPs: string;
}

describe("a sender's addresses, past the domain's first thousand sources", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let apiKey: string;
  let names: Map<string, ServiceNaming>;
  let browser: Browser | undefined;
  const errors: string[] = [];

  const senderOfIp = (ip: string) => names.get(ip)?.sender.sender ?? "unknown";
  /** The domain's source records as the API must answer them, from the report file. */
  const expectedAll = () =>
    expectedSourceRecords(readSimpleRows(reportFile), false, (ip) => {
      const source = names.get(ip)?.source;
      return source ?? { Service: "", ServiceType: "", ASN: "", ASNOrganization: "", Country: "" };
    });
  /** The sender with the most records past the first thousand by messages: the old panel missed them. */
  const chosenSender = () => {
    const past = new Map<string, number>();
    for (const record of expectedAll().slice(1000)) {
      const sender = senderOfIp(record.SourceIp);
      if (sender !== "unknown") past.set(sender, (past.get(sender) ?? 0) + 1);
    }
    return [...past].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
  };
  const pages = async (query: string, perPage: number) => {
    const out: unknown[] = [];
    let total = -1;
    for (let page = 1; ; page++) {
      const got = await handle.get(`aggregate_by_source?${query}&per_page=${perPage}&page=${page}`, apiKey);
      expect(got.status, got.body).toBe(200);
      const answer = got.json as { total: number; records: unknown[] };
      total = answer.total;
      out.push(...answer.records);
      if (answer.records.length < perPage) return { total, records: out };
    }
  };

  beforeAll(async () => {
    requireChromium();
    [backend] = await Promise.all([postgresBackend(), builtWeb()]);
    apiKey = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out).apiKey;
    handle = await startTestService({ ...backend.env, SOURCE_IP_RESOLVER: "off" });
    expect((await handle.put("add_domain", apiKey, { domain: "example.com" })).status).toBe(200);
    const imported = await cli(backend.env, "import", reportFile);
    expect(imported.code, imported.err).toBe(0);
    await waitForEverySourceNamed(handle.runtime);
    names = await serviceNamings(handle.runtime.db);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await handle?.stop();
    await backend?.cleanup();
  });

  it("answers exactly the sender's source records, paged, and no other's", async () => {
    const all = expectedAll();
    expect(all.length).toBeGreaterThan(1000);
    const sender = chosenSender();
    const want = all.filter((record) => senderOfIp(record.SourceIp) === sender);
    expect(want.length).toBeGreaterThan(0);
    const query = `start=0&domain=example.com&sender=${encodeURIComponent(sender)}`;
    // Pages of 100: the records of every page, in the order of one list.
    const got = await pages(query, 100);
    expect(got.total).toBe(want.length);
    expect(got.records).toEqual(want);
    // The count aggregate_by_sender gives for the sender is the panel's rows.
    const senders = (await handle.get("aggregate_by_sender?start=0&domain=example.com&per_page=1000", apiKey))
      .json as { records: SenderRecord[] };
    const record = senders.records.find((r) => r.Service === sender)!;
    expect(Number(record.SourceIPs)).toBe(new Set(want.map((r) => r.SourceIp)).size);
    // "unknown" is a sender too: the addresses named by nothing.
    const unknown = all.filter((r) => senderOfIp(r.SourceIp) === "unknown");
    expect((await pages("start=0&domain=example.com&sender=unknown", 1000)).records).toEqual(unknown);
    // A sender no address has: nothing.
    expect(await pages("start=0&domain=example.com&sender=No%20such%20sender", 1000)).toEqual({
      total: 0,
      records: [],
    });
    // Only where it is a parameter.
    const refused = await handle.get(`aggregate_by_organization?${query}`, apiKey);
    expect(refused.status).toBe(400);
  });

  it("lists every address of the sender in its panel, those past the domain's first thousand too", async () => {
    const sender = chosenSender();
    const want = expectedAll().filter((record) => senderOfIp(record.SourceIp) === sender);
    await addPerson(
      { ...backend.env, PUBLIC_BASE_URL: handle.service.apiRoot },
      handle.service.apiRoot,
      "acme",
      "admin@acme.example",
      "admin",
      password,
    );
    browser = await launchChromium();
    const context: BrowserContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const origin = new URL(handle.service.apiRoot).origin;
    const signIn = await openWatched(context, `${origin}/`, errors);
    await signIn.getByLabel("E-mail address").fill("admin@acme.example");
    await signIn.getByLabel("Password").fill(password);
    await signIn.getByRole("button", { name: "Sign in" }).click();
    await signIn.getByRole("navigation", { name: "Views" }).waitFor();
    await signIn.close();

    const key = encodeURIComponent(`example.com|${sender}`);
    const page = await openWatched(context, `${origin}/senders?${period}&tab=services&sender=${key}`, errors);
    await page.locator("table#sender-ips tbody tr").first().waitFor();
    const count =
      (await page.locator(`section[aria-labelledby="sender-ips-card"] .table-count`).textContent()) ?? "";
    expect(count).toMatch(new RegExp(`^${want.length.toLocaleString("en")} rows?\\b`));
    // The first page of the panel: the sender's addresses with the most messages, in order.
    const shown = await tableCells(page, "sender-ips");
    expect(shown.map((row) => row[0])).toEqual(want.slice(0, shown.length).map((r) => r.SourceIp));
    expect(shown.length).toBe(Math.min(20, want.length));
    expect(errors).toEqual([]);
    await page.close();
  });
});
