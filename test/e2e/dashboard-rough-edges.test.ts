import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitForProjections } from "@dmarc-ledger/projection-engine";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant, removeDomain } from "@dmarc-ledger/tenancy";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isFormulaLike, parseCsv } from "../../apps/web/src/lib/csv.js";
import { launchChromium, requireChromium } from "../support/browser.js";
import { builtWeb } from "../support/built-processes.js";
import { aggregateCorpus, corpusDir } from "../support/corpus.js";
import { addPerson } from "../support/dashboard-session.js";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

// The browser's global a function handed to page.evaluate uses (the tests are typed for node).
declare class DataTransfer {
  items: { add(file: File): void };
}

const password = "acme admin's long password";
// The corpus spans 2018 to 2024.
const period = "period=custom&from=2018-01-01&to=2024-12-31";
const apiPeriod = `start=${Date.UTC(2018, 0, 1) / 1000}&end=${Date.UTC(2024, 11, 31, 23, 59, 59) / 1000}`;

/**
 * The dashboard's rough edges, each found by a mail admin on the real reports of the corpus
 * (issue 40's CSV point, issue 45's section 3), in chromium.
 */
describe("the dashboard's rough edges, in a real browser", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let env: NodeJS.ProcessEnv;
  let browser: Browser;
  let origin: string;
  let admin: BrowserContext;
  let work: string;
  const pageErrors: string[] = [];

  async function open(context: BrowserContext, path: string): Promise<Page> {
    const page = await context.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${origin}${path}`);
    return page;
  }

  async function download(page: Page): Promise<string[][]> {
    const [file] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download CSV" }).first().click(),
    ]);
    return parseCsv(readFileSync((await file.path())!, "utf8"));
  }

  async function api<T>(path: string): Promise<T> {
    const response = await admin.request.get(`${origin}/api/${path}`);
    expect(response.status(), path).toBe(200);
    return (await response.json()) as T;
  }

  async function imported(...paths: string[]) {
    const result = await cli(env, "import", ...paths);
    expect([0, 2], result.err).toContain(result.code);
    const head = await handle.runtime.store.headPosition();
    expect(await waitForProjections(handle.runtime.db, allProjections, head!, 30_000)).toBe(true);
    return result;
  }

  beforeAll(async () => {
    requireChromium();
    [backend] = await Promise.all([postgresBackend(), builtWeb()]);
    handle = await startTestService(backend.env);
    origin = new URL(handle.service.apiRoot).origin;
    env = { ...backend.env, PUBLIC_BASE_URL: handle.service.apiRoot };
    work = mkdtempSync(join(tmpdir(), "dl-rough-edges-"));
    const meta = { causedBy: "test" };
    const acme = await createTenant(handle.runtime.store, { name: "acme", region: "global" }, meta);
    await addDomain(handle.runtime.store, { tenantId: acme.tenantId, domain: "example.com" }, meta);
    await imported(join(corpusDir, "dmarc/parsedmarc"));
    await addPerson(env, handle.service.apiRoot, "acme", "admin@acme.example", "admin", password);
    browser = await launchChromium();
    admin = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const page = await open(admin, "/");
    await page.getByLabel("E-mail address").fill("admin@acme.example");
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Views" }).waitFor();
    await page.close();
  });
  afterAll(async () => {
    await browser?.close();
    await handle?.stop();
    await backend?.cleanup();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("exports a reporter named like a formula as text a spreadsheet does not run", async () => {
    // A real report of the corpus, as an attacker would resend it: their organisation name is
    // issue 40's payload, which the guard of before let through (a minus before a digit). In
    // lower case: the reporters' names are.
    const payload = "-1+cmd|' /c calc'!a0";
    const report = readFileSync(
      `${aggregateCorpus}addisonfoods.com!example.com!1536105600!1536191999.xml`,
      "utf8",
    )
      .replace("<org_name>addisonfoods.com</org_name>", `<org_name>${payload}</org_name>`)
      .replace(/<report_id>[^<]+<\/report_id>/, "<report_id>csv-injection-1</report_id>");
    expect(report).toContain(payload);
    const file = join(work, "csv-injection.xml");
    writeFileSync(file, report);
    await imported(file);

    const page = await open(admin, `/reporters?${period}`);
    await page.locator("table#reporters tbody tr").first().waitFor();
    const csv = await download(page);
    const reporters = csv.slice(1).map((row) => row[0]);
    expect(reporters).toContain(`'${payload}`);
    expect(reporters).not.toContain(payload);
    await page.close();
  });

  it("offers all time, which shows the reports of years ago", async () => {
    // The corpus is 2018 to 2024: the last 30 days, the default, hold none of it.
    const page = await open(admin, "/reporters");
    await page.getByText(/^No reports for /).waitFor();
    await page.getByLabel("Period").selectOption({ label: "All time" });
    await page.waitForURL(/period=all/);
    await page.locator("table#reporters tbody tr").first().waitFor();
    const everyReporter = await api<{ total: number }>("aggregate_by_organization?start=0&per_page=1000");
    expect(everyReporter.total).toBeGreaterThan(1);
    await expect
      .poll(() => page.locator(".table-block:has(table#reporters) .table-count").textContent())
      .toBe(`${everyReporter.total} rows`);
    await page.close();
  });

  it("sorts Sources and Unaligned sources each on its own, in the URL", async () => {
    const page = await open(admin, `/senders?${period}&tab=sources`);
    await page.locator("table#sources tbody tr").first().waitFor();
    await page.getByRole("button", { name: "Reporter" }).click();
    await page.waitForURL(/sources_sort=reporter/);
    await page.getByRole("link", { name: "Unaligned sources" }).click();
    await page.waitForURL(/tab=unaligned/);
    // The unaligned sources keep their own order, most failing messages first: the API's.
    const unaligned = await api<{ records: { SourceIp: string; Volume: string }[] }>(
      `aggregate_by_unaligned_source?${apiPeriod}&per_page=20`,
    );
    await expect
      .poll(async () =>
        (await page.locator("main table tbody tr td:first-child").allTextContents()).slice(0, 20),
      )
      .toEqual(unaligned.records.map((r) => r.SourceIp));
    await page.getByRole("button", { name: "Last seen" }).click();
    await page.waitForURL(/unaligned_sort=last/);
    expect(new URL(page.url()).searchParams.get("sources_sort")).toBe("reporter");
    await page.goBack();
    await page.goBack();
    await page.waitForURL((url) => url.searchParams.get("tab") === "sources");
    await expect.poll(() => page.locator("main table th[aria-sort]").textContent()).toMatch(/^Reporter/);
    await page.close();
  });

  it("downloads every source as CSV, not the thousand the table holds", async () => {
    const page = await open(admin, `/senders?${period}&tab=sources`);
    await page.locator("table#sources tbody tr").first().waitFor();
    const every: string[] = [];
    let total = 0;
    for (let p = 1; every.length < total || p === 1; p++) {
      const answer = await api<{
        total: number;
        records: { SourceIp: string; DomainPublished: string; Organization: string }[];
      }>(`aggregate_by_source?${apiPeriod}&page=${p}&per_page=1000`);
      total = answer.total;
      if (answer.records.length === 0) break;
      // As the CSV writes them: the formula-named reporter of the first test neutralised.
      const cell = (text: string) => (isFormulaLike(text) ? `'${text}` : text);
      every.push(...answer.records.map((r) => `${r.SourceIp}|${cell(r.Organization)}`));
    }
    // The corpus's large-example.com report alone holds 2,286 sources.
    expect(total).toBeGreaterThan(1000);
    const csv = await download(page);
    const header = csv[0]!;
    const ip = header.indexOf("Source IP");
    const reporter = header.indexOf("Reporter");
    expect(ip).toBeGreaterThanOrEqual(0);
    expect(csv.slice(1).map((row) => `${row[ip]}|${row[reporter]}`)).toEqual(every);
    await page.close();
  });

  it("shows a failure report's source, SPF and DKIM results, failure and delivery", async () => {
    // LinkedIn's report of the corpus: its ARF part says Source-IP 10.10.10.10, Auth-Failure
    // dmarc, Delivery-Result delivered; the reported message's Authentication-Results header,
    // written by LinkedIn's receiver, spf=neutral and dkim=none.
    const page = await open(admin, `/failures?${period}`);
    await page.locator("table#failures tbody tr").first().waitFor();
    const row = page.locator("table#failures tbody tr", { hasText: "2019-04-30" });
    await row.getByRole("button").click();
    const fact = (label: string) => page.locator(`dl.facts dt:text-is("${label}") + dd`);
    await expect.poll(() => fact("Source IP").textContent()).toBe("10.10.10.10");
    expect(await fact("SPF").textContent()).toBe("neutral");
    expect(await fact("DKIM").textContent()).toBe("none");
    expect(await fact("Failed").textContent()).toBe("dmarc");
    expect(await fact("Delivery").textContent()).toBe("delivered");
    expect(await fact("Feedback type").textContent()).toBe("auth-failure");
    await page.close();
  });

  it("shows bytes received again as stored, with the reports they stored, not as duplicates", async () => {
    // The same bytes again: the archive counts a second receipt of the input that stored them.
    const again = `${aggregateCorpus}addisonfoods.com!example.com!1536105600!1536191999.xml`;
    const result = await imported(again);
    expect(result.out).toContain("duplicate");
    const page = await open(admin, "/intake");
    await page.locator("main table tbody tr").first().waitFor();
    const headers = await page.locator("main table thead th").allTextContents();
    const column = (label: string) => headers.findIndex((h) => h.startsWith(label));
    // The input received twice: the only one (the corpus's other inputs came once each).
    const rows = (await page
      .locator("main table tbody tr")
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")),
      )) as string[][];
    const twice = rows.filter((cells) => cells[column("Times received")] === "2");
    expect(twice).toHaveLength(1);
    expect(twice[0]![column("Outcome")]).toBe("stored");
    expect(twice[0]![column("Reports")]).toMatch(/^aggregate report for example\.com.*: stored$/);
    await page.close();
  });
  it("says a domain added twice was already there: the API, the CLI and the Domains page", async () => {
    const page = await open(admin, "/domains");
    const put = (domain: string) =>
      page.evaluate(async (name) => {
        const session = (await (await fetch("/api/session")).json()) as { csrf_token: string };
        const response = await fetch("/api/add-domain", {
          method: "PUT",
          headers: { "X-CSRF-Token": session.csrf_token },
          body: new URLSearchParams({ domain: name }),
        });
        return { status: response.status, json: (await response.json()) as unknown };
      }, domain);
    // The corpus's own domain, the tenant's since the start; then one it did not have.
    expect(await put("Example.COM")).toEqual({ status: 200, json: { status: "SUCCESS", added: false } });
    expect(await put("addisonfoods.com")).toEqual({ status: 200, json: { status: "SUCCESS", added: true } });
    expect((await cli(env, "domain", "add", "acme", "addisonfoods.com")).out).toContain(
      "addisonfoods.com is already on this tenant.",
    );

    await page.getByLabel("Domain name").fill("example.com");
    await page.getByRole("button", { name: "Add domain" }).click();
    await page.getByText("example.com is already one of your domains.").waitFor();
    expect(await page.getByText("example.com added.").count()).toBe(0);
    await page.close();
  });
  it("shows in History who did what by their address and the tenant by its name, and no other tenant's past", async () => {
    // borschow.com of the corpus was another tenant's before acme's, added there by one of its people.
    const globex = await createTenant(
      handle.runtime.store,
      { name: "globex", region: "global" },
      { causedBy: "cli" },
    );
    const theirs = { causedBy: "user:0f0e0d0c0b0a0908" };
    await addDomain(handle.runtime.store, { tenantId: globex.tenantId, domain: "borschow.com" }, theirs);
    await removeDomain(handle.runtime.store, { tenantId: globex.tenantId, domain: "borschow.com" }, theirs);
    const page = await open(admin, "/domains");
    await page.getByLabel("Domain name").fill("borschow.com");
    await page.getByRole("button", { name: "Add domain" }).click();
    await page.getByText("borschow.com added.").waitFor();
    await page.locator("table#history tbody tr").first().waitFor();
    const history = await api<{
      records: { Event: string; CausedBy: string; CausedByEmail: string | null }[];
    }>("history?domain=borschow.com");
    expect(history.records.map((r) => r.Event)).toEqual(["DomainAdded"]);
    expect(history.records[0]!.CausedBy).toMatch(/^user:/);
    expect(history.records[0]!.CausedByEmail).toBe("admin@acme.example");
    const rows = await page
      .locator("table#history tbody tr")
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")),
      );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain("added to tenant acme");
    expect(rows[0]).toContain("admin@acme.example");
    expect(JSON.stringify(history)).not.toContain(globex.tenantId);
    await page.close();
  });
  it("tells of no mailbox to point reports at when neither SMTP nor IMAP intake is set up", async () => {
    // This service runs with neither REPORTS_DOMAIN nor IMAP_URL: no mail reaches it.
    expect(env.IMAP_URL ?? "").toBe("");
    expect(env.REPORTS_DOMAIN ?? "").toBe("");
    const session = await api<{ mail_intake: unknown }>("session");
    expect(session.mail_intake).toEqual({ smtp: false, imap: false });
    const page = await open(admin, "/domains");
    const card = page.getByRole("region", { name: "Add a domain" });
    await card.getByText(/receives no reports by mail/).waitFor();
    expect(await card.textContent()).not.toMatch(/IMAP\)|a mailbox this service reads/);
    // An Intake period with nothing in it, years before the corpus.
    const intake = await open(admin, "/intake?period=custom&from=2001-01-01&to=2001-01-31");
    const empty = intake.locator(".empty", { hasText: "Nothing arrived" });
    await empty.waitFor();
    expect(await empty.textContent()).not.toMatch(/SMTP|IMAP/);
    expect(await empty.textContent()).toMatch(/upload/);
    await page.close();
    await intake.close();
  });
  it("lists in Intake an input the CLI refused that names one of the tenant's domains", async () => {
    // A real report of example.com whose period ends before it begins: the parser refuses it.
    const whole = readFileSync(
      `${aggregateCorpus}addisonfoods.com!example.com!1536105600!1536191999.xml`,
      "utf8",
    ).replace(/<report_id>[^<]+<\/report_id>/, "<report_id>cut-short-1</report_id>");
    const cut = whole
      .replace("<begin>1536105600</begin>", "<begin>1536191999</begin>")
      .replace("<end>1536191999</end>", "<end>1536105600</end>");
    expect(cut).toContain("<end>1536105600</end>");
    const file = join(work, "cut-short.xml");
    writeFileSync(file, cut);
    const result = await imported(file);
    expect(result.code).toBe(2);
    const refusal = /cut-short\.xml: rejected \(([a-z_]+)\): (.+?); kept/.exec(result.err);
    expect(refusal, result.err).not.toBeNull();
    const page = await open(admin, "/intake?status=rejected");
    // Its row: the outcome rejected, the reason the CLI gave.
    const row = page.locator("main table tbody tr", { hasText: refusal![2]! });
    await row.waitFor({ timeout: 10_000 });
    expect(await row.locator(".badge").textContent()).toBe("rejected");
    await page.close();
  });
  it("says of an uploaded report for a domain not the account's that no view of it counts it", async () => {
    // A real report of example.de, which acme does not have, sent again under a new id.
    const report = readFileSync(
      `${aggregateCorpus}ikea.com!example.de!1538690400!1538776800.xml`,
      "utf8",
    ).replace(/<report_id>[^<]+<\/report_id>/, "<report_id>not-ours-1</report_id>");
    const page = await open(admin, "/intake");
    const dropped = await page.evaluateHandle((xml) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([xml], "not-ours.xml", { type: "text/xml" }));
      return transfer;
    }, report);
    await page.locator(".dropzone").dispatchEvent("drop", { dataTransfer: dropped });
    const line = page.locator("li", { hasText: "not-ours.xml" });
    await line.waitFor();
    expect(await line.textContent()).toMatch(
      /aggregate report for example\.de.*: stored \(example\.de is not one of your domains: no view of yours counts it\)/,
    );
    await page.close();
  });
});
