import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type SourceIpNaming, streams } from "@dmarc-ledger/events";
import { waitForProjections } from "@dmarc-ledger/projection-engine";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCsv } from "../../apps/web/src/lib/csv.js";
import {
  launchChromium,
  requireChromium,
  seriousAxeViolations,
  shownNumber,
  tableCells,
  tableHeaders,
} from "../support/browser.js";
import { builtWeb } from "../support/built-processes.js";
import { corpusDir } from "../support/corpus.js";
import { addPerson, linkToken } from "../support/dashboard-session.js";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { namedSourceIp } from "../support/source-ip-naming.js";
import { waitForEverySourceNamed } from "../support/sources-named.js";

// The browser's globals the functions handed to page.evaluate use (they run in the page; the
// tests' program is typed for node, without the DOM's types).
declare const document: { cookie: string; documentElement: { scrollWidth: number } };
declare class DataTransfer {
  items: { add(file: File): void };
}

/** Where the run writes a screenshot of every view at both widths (docs/screenshots/README.md). */
const screenshots = fileURLToPath(new URL("../../docs/screenshots/run/", import.meta.url));

// The corpus spans 2018 to 2024: the views are read over those years, as a shared link names them.
const period = "period=custom&from=2018-01-01&to=2024-12-31";
const start = Date.UTC(2018, 0, 1) / 1000;
const end = Date.UTC(2024, 11, 31, 23, 59, 59) / 1000;
const apiPeriod = `start=${start}&end=${end}`;

const password = {
  admin: "acme admin's long password",
  viewer: "acme viewer's long password",
  other: "other admin's long password",
};

const formatCount = (value: string | number) => new Intl.NumberFormat("en").format(Number(value));
const formatShare = (part: string, whole: string) =>
  Number(whole) === 0 ? "–" : `${(Math.round((Number(part) / Number(whole)) * 1000) / 10).toFixed(1)}%`;

/** The test's names for example.com's busiest sources: a service of three, a base domain, an AS. */
const namingSources = { serviceMap: "test-map", asnDatabase: "test-asn", countryDatabase: "test-country" };
function namingOf(index: number): SourceIpNaming | null {
  const asn = { number: 64_500 + index, organization: `Test Network ${index}` };
  const country = ["DE", "FR", "US"][index % 3]!;
  if (index < 3) {
    const service = { name: "Mailer One", type: "SaaS" };
    return { baseDomain: `mailer-${index}.example`, service, asn, country, sources: namingSources };
  }
  if (index === 3)
    return { baseDomain: "unmapped.example", service: null, asn, country, sources: namingSources };
  if (index === 4) return { baseDomain: null, service: null, asn, country, sources: namingSources };
  return null;
}

interface SourceNames {
  SourceIp: string;
  SourceDomain: string;
  Organization: string;
  Volume: string;
  DMARC: string;
  Service: string;
  ASN: string;
  ASNOrganization: string;
  Country: string;
}

interface SenderRecord {
  Domain: string;
  Service: string;
  ServiceType: string;
  ASN: string;
  ASNOrganization: string;
  Country: string;
  SourceIPs: string;
  Volume: string;
  DMARC: string;
  SPFAligned: string;
  DKIMAligned: string;
  Approved: boolean | null;
}

interface PolicyImpact {
  total: number;
  totals: Record<"Volume" | "DMARC" | "Stopped" | "Forwarded" | "LegitimateAtRisk" | "AbuseStopped", string>;
  records: {
    Domain: string;
    Service: string;
    ServiceType: string;
    Approved: boolean | null;
    Stopped: string;
    Forwarded: string;
    LegitimateAtRisk: string;
    AbuseStopped: string;
  }[];
}

const shownApproval = (approved: boolean | null) => (approved === null ? "–" : approved ? "yes" : "no");
const orDash = (text: string) => text || "–";

/** A downloaded CSV's cells and a table's as the same text: numbers unformatted, "–" empty. */
const normaliseCell = (cell: string) =>
  /^[\d,.]+%?$/.test(cell) ? String(shownNumber(cell)) : cell === "–" ? "" : cell;

interface Counters {
  Volume: string;
  DMARC: string;
  DMARCUnaligned: string;
  SPFAligned: string;
  DKIMAligned: string;
}

/** An aggregate report of example.com, of 77 messages from one source, in the views' period. */
const uploadedReport = `<?xml version="1.0"?>
<feedback><report_metadata><org_name>Upload Test Org</org_name><email>dmarc@upload.example</email>
<report_id>dashboard-upload-1</report_id><date_range><begin>1590969600</begin><end>1591055999</end></date_range></report_metadata>
<policy_published><domain>example.com</domain><p>none</p></policy_published>
<record><row><source_ip>198.51.100.77</source_ip><count>77</count><policy_evaluated><disposition>none</disposition>
<dkim>fail</dkim><spf>fail</spf></policy_evaluated></row>
<identifiers><header_from>example.com</header_from></identifiers>
<auth_results><spf><domain>upload.example</domain><result>fail</result></spf></auth_results></record>
</feedback>`;

describe("the dashboard in a real browser", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let browser: Browser;
  let origin: string;
  let admin: BrowserContext;
  let viewer: BrowserContext;
  let other: BrowserContext;
  const consoleErrors: string[] = [];

  /** A page of the context, its console errors and failed page scripts collected. */
  async function open(context: BrowserContext, path: string): Promise<Page> {
    const page = await context.newPage();
    page.on("console", (message) => {
      // Refusals the tests provoke (401 before sign-in, 403, 404) are the API's answers, not faults;
      // anything else said on the console is (a script error, a refused style or script).
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
        consoleErrors.push(message.text());
      }
    });
    page.on("pageerror", (error) => consoleErrors.push(error.message));
    await page.goto(`${origin}${path}`);
    return page;
  }

  /** The API as the signed-in person of the context: the same session the page uses. */
  async function api<T>(context: BrowserContext, path: string): Promise<T> {
    const response = await context.request.get(`${origin}/api/${path}`);
    expect(response.status(), path).toBe(200);
    return (await response.json()) as T;
  }

  async function signedIn(email: string, secret: string): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    const page = await open(context, "/");
    await page.getByLabel("E-mail address").fill(email);
    await page.getByLabel("Password").fill(secret);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Views" }).waitFor();
    await page.close();
    return context;
  }

  beforeAll(async () => {
    // In its first seconds, with the line to run, when the browser is missing.
    requireChromium();
    [backend] = await Promise.all([postgresBackend(), builtWeb()]);
    // The webhook added below is never resolved when added (this machine may have no DNS for
    // hooks.example.com): what the dashboard shows of it is the test, not the address check.
    handle = await startTestService({ ...backend.env, WEBHOOK_ALLOW_PRIVATE_ADDRESSES: "yes" });
    origin = new URL(handle.service.apiRoot).origin;
    const env = { ...backend.env, PUBLIC_BASE_URL: handle.service.apiRoot };
    const meta = { causedBy: "test" };
    const acme = await createTenant(handle.runtime.store, { name: "acme", region: "global" }, meta);
    const otherTenant = await createTenant(handle.runtime.store, { name: "other", region: "global" }, meta);
    await addDomain(handle.runtime.store, { tenantId: acme.tenantId, domain: "example.com" }, meta);
    await addDomain(handle.runtime.store, { tenantId: otherTenant.tenantId, domain: "example.de" }, meta);
    const imported = await cli(env, "import", join(corpusDir, "dmarc/parsedmarc"));
    expect([0, 2], imported.err).toContain(imported.code);
    const root = handle.service.apiRoot;
    await addPerson(env, root, "acme", "admin@acme.example", "admin", password.admin);
    await addPerson(env, root, "acme", "viewer@acme.example", "viewer", password.viewer);
    await addPerson(env, root, "other", "admin@other.example", "admin", password.other);
    browser = await launchChromium();
    [admin, viewer, other] = await Promise.all([
      signedIn("admin@acme.example", password.admin),
      signedIn("viewer@acme.example", password.viewer),
      signedIn("admin@other.example", password.other),
    ]);
    mkdirSync(screenshots, { recursive: true });
    // Names for example.com's busiest sources, as the resolver would append them (no DNS here).
    const busiest = await api<{ records: { SourceIp: string }[] }>(
      admin,
      `aggregate_by_source?${apiPeriod}&domain=example.com&per_page=1000`,
    );
    const ips = [...new Set(busiest.records.map((r) => r.SourceIp))].slice(0, 6);
    let position = 0n;
    for (const [index, ip] of ips.entries()) {
      const naming = namingOf(index);
      if (!naming) continue;
      const resolved = namedSourceIp(ip, naming);
      position = (await handle.runtime.store.append(streams.sourceIp(ip), [resolved], "any")).position;
    }
    expect(await waitForProjections(handle.runtime.db, allProjections, position, 30_000)).toBe(true);
    // The service names every other source at first sight, in the background: the views are
    // compared with the API once that is done, not while names still arrive.
    await waitForEverySourceNamed(handle.runtime);
  });
  afterAll(async () => {
    await browser?.close();
    await handle?.stop();
    await backend?.cleanup();
  });

  it("signs in with an httpOnly cookie, refuses a wrong password without saying why, and signs out", async () => {
    const context = await browser.newContext();
    const page = await open(context, "/");
    await page.getByLabel("E-mail address").fill("admin@acme.example");
    await page.getByLabel("Password").fill("not the password at all");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toBe("The e-mail address or the password is wrong.");
    await page.getByLabel("Password").fill(password.admin);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Views" }).waitFor();
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: "dl_session", httpOnly: true, sameSite: "Lax", secure: false });
    expect(await page.evaluate(() => document.cookie)).toBe("");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    expect((await context.request.get(`${origin}/api/session`)).status()).toBe(401);
    await context.close();
  });

  it("sets a password through a one-time link and lands signed in", async () => {
    const added = await cli(
      { ...backend.env, PUBLIC_BASE_URL: handle.service.apiRoot },
      "user",
      "add",
      "acme",
      "new@acme.example",
      "--role",
      "viewer",
      "--json",
    );
    const link = JSON.parse(added.out).setPasswordUrl as string;
    expect(new URL(link).origin).toBe(origin);
    const context = await browser.newContext();
    const page = await open(context, new URL(link).pathname + new URL(link).hash);
    await page.getByLabel(/New password/).fill("new person's long password");
    await page.getByLabel("The same again").fill("new person's long password");
    await page.getByRole("button", { name: "Set password and sign in" }).click();
    await page.getByRole("navigation", { name: "Views" }).waitFor();
    expect(page.url()).toBe(`${origin}/`);
    // Used once: the same link again is refused.
    const again = await context.request.put(`${origin}/api/set_password`, {
      form: { token: linkToken(link), password: "another long password" },
    });
    expect(again.status()).toBe(400);
    await context.close();
  });

  it("shows on the overview the API's numbers for the same period", async () => {
    const page = await open(admin, `/?${period}`);
    await page.locator("table#domains tbody tr").first().waitFor();
    const domains = (
      await api<{ records: (Counters & { Domain: string })[] }>(
        admin,
        `aggregate_by_domain?${apiPeriod}&per_page=1000`,
      )
    ).records;
    const volume = domains.reduce((sum, r) => sum + Number(r.Volume), 0);
    expect(volume).toBeGreaterThan(1000);
    const kpis = await page.$$eval(".kpi", (cards) =>
      cards.map((card) => [
        card.querySelector(".kpi-label")!.textContent,
        card.querySelector(".kpi-value")!.textContent,
      ]),
    );
    expect(kpis[0]).toEqual(["Messages", formatCount(volume)]);
    const passed = domains.reduce((sum, r) => sum + Number(r.DMARC), 0);
    expect(kpis[1]).toEqual(["DMARC pass", formatShare(String(passed), String(volume))]);
    const rows = await tableCells(page, "domains");
    expect(rows.map((row) => [row[0], row[1], row[2], row[4]])).toEqual(
      domains.map((r) => [
        r.Domain,
        formatCount(r.Volume),
        formatShare(r.DMARC, r.Volume),
        formatCount(r.DMARCUnaligned),
      ]),
    );
    const failing = (
      await api<{ records: { SourceIp: string; Volume: string }[] }>(
        admin,
        `aggregate_by_unaligned_source?${apiPeriod}&per_page=10`,
      )
    ).records;
    const senders = await tableCells(page, "failing");
    expect(senders.map((row) => [row[0], shownNumber(row[4]!)])).toEqual(
      failing.map((r) => [r.SourceIp, Number(r.Volume)]),
    );
    // The charts are drawn (ECharts' SVG), and labelled for assistive technology.
    await expect.poll(() => page.locator('[role="img"] svg').count()).toBe(2);
  });

  it("draws the overview's volume over time from aggregate_by_date, by week over seven years", async () => {
    const page = await admin.newPage();
    page.on("pageerror", (error) => consoleErrors.push(error.message));
    const asked = page.waitForResponse(
      (response) => new URL(response.url()).pathname === "/api/aggregate_by_date",
    );
    await page.goto(`${origin}/?${period}`);
    const response = await asked;
    expect(response.status()).toBe(200);
    // 2,557 days are more than the API serves by day: the overview asks by ISO week, in one page.
    expect(Object.fromEntries(new URL(response.url()).searchParams)).toMatchObject({
      start: String(start),
      end: String(end),
      bucket: "week",
      per_page: "1000",
    });
    type Weekly = { total: number; records: (Counters & { Date: string })[] };
    const shown = (await response.json()) as Weekly;
    const weekly = await api<Weekly>(admin, `aggregate_by_date?${apiPeriod}&bucket=week&per_page=1000`);
    expect(shown).toEqual(weekly);
    expect([weekly.total, weekly.records.length, weekly.records[0]!.Date]).toEqual([366, 366, "2018-01-01"]);
    // Whole weeks over whole days: the series holds every message of the domains' grouping.
    const domains = await api<{ records: Counters[] }>(
      admin,
      `aggregate_by_domain?${apiPeriod}&per_page=1000`,
    );
    const sum = (records: Counters[]) => records.reduce((total, r) => total + Number(r.Volume), 0);
    expect(sum(weekly.records)).toBe(sum(domains.records));
    const chart = page.locator('section[aria-labelledby="volume-over-time"] [role="img"]');
    expect(await chart.getAttribute("aria-label")).toBe(
      "Messages per week, stacked: passed DMARC, and failed by what the receiver did",
    );
    await chart.locator("svg").waitFor();
    // The category axis names the weeks by their first day, the first of them among its labels.
    await expect.poll(() => chart.locator("svg text").allTextContents()).toContain("2018-01-01");
    await page.close();
  });

  it("shows on every other view the API's records for the same period", async () => {
    const page = await open(admin, `/senders?${period}&tab=sources`);
    await page.locator("table#sources tbody tr").first().waitFor();
    const sources = await api<{
      total: number;
      records: { SourceIp: string; DomainPublished: string; Organization: string; Volume: string }[];
    }>(admin, `aggregate_by_source?${apiPeriod}&per_page=1000`);
    const shown = await tableCells(page, "sources");
    expect(shown.map((row) => [row[0], row[2], row[3], shownNumber(row[4]!)])).toEqual(
      sources.records
        .slice(0, shown.length)
        .map((r) => [r.SourceIp, r.DomainPublished, r.Organization, Number(r.Volume)]),
    );
    expect(await page.locator(".table-count").first().textContent()).toContain(
      `${formatCount(Math.min(1000, sources.total))} rows`,
    );

    await page.getByRole("link", { name: "Unaligned sources" }).click();
    await page.waitForURL(/tab=unaligned/);
    const unaligned = (
      await api<{ records: { SourceIp: string; Volume: string }[] }>(
        admin,
        `aggregate_by_unaligned_source?${apiPeriod}&per_page=1000`,
      )
    ).records;
    // The same table element shows the sources until the unaligned ones arrive: polled, not read
    // once (a read right after the click saw the sources, a flaky failure).
    await expect
      .poll(async () => (await tableCells(page, "unaligned")).map((row) => [row[0], shownNumber(row[4]!)]))
      .toEqual(unaligned.slice(0, 20).map((r) => [r.SourceIp, Number(r.Volume)]));

    await page.getByRole("link", { name: "Reporters" }).click();
    await page.locator("table#reporters tbody tr").first().waitFor();
    const reporters = (
      await api<{ records: (Counters & { Organization: string })[] }>(
        admin,
        `aggregate_by_organization?${apiPeriod}&per_page=1000`,
      )
    ).records;
    expect((await tableCells(page, "reporters")).map((row) => row.slice(0, 4))).toEqual(
      reporters
        .slice(0, 20)
        .map((r) => [
          r.Organization,
          formatCount(r.Volume),
          formatShare(r.DMARC, r.Volume),
          formatCount(r.DMARCUnaligned),
        ]),
    );

    await page.getByRole("link", { name: "Failure reports" }).click();
    await page.locator("table#failures tbody tr").first().waitFor();
    const failures = (
      await api<{ records: { Subject: string; Domain: string; Headers: string }[] }>(
        admin,
        `forensic?${apiPeriod}&per_page=1000`,
      )
    ).records;
    expect((await tableCells(page, "failures")).map((row) => [row[1], row[2]])).toEqual(
      failures.map((r) => [r.Domain, r.Subject]),
    );
    // Redacted by default: every subject reads "(removed)"; the first row's is the first report's.
    await page.getByRole("button", { name: failures[0]!.Subject }).first().click();
    await expect.poll(() => page.locator(".headers pre").textContent()).toBe(failures[0]!.Headers);
    expect(page.url()).toMatch(/report=\d+/);

    await page.getByRole("link", { name: "Domains" }).click();
    await page.locator("table#domainlist tbody tr").first().waitFor();
    const owned = (await api<{ records: { Domain: string }[] }>(admin, "domains")).records;
    expect((await tableCells(page, "domainlist")).map((row) => row[0])).toEqual(owned.map((r) => r.Domain));
    await page.getByRole("link", { name: "example.com", exact: true }).click();
    await page.locator("table#history tbody tr").first().waitFor();
    const history = (await api<{ total: number }>(admin, "history?domain=example.com")).total;
    expect(await page.locator(".table-count", { hasText: "row" }).last().textContent()).toContain(
      `${history} row`,
    );
    await page.getByText(/Onboarding check of example\.com/).waitFor();

    // Inputs are listed by when they arrived: the last 7 days hold the corpus imported above.
    await page.goto(`${origin}/intake?period=7d`);
    await page.locator("table#inputs tbody tr").first().waitFor();
    const today = Math.floor(Date.now() / 86_400_000) * 86_400;
    const inputs = (
      await api<{ total: number; records: { Outcome: string; Channel: string }[] }>(
        admin,
        `inputs?start=${today - 6 * 86_400}&end=${today + 86_399}&per_page=1000`,
      )
    ).records;
    expect((await tableCells(page, "inputs")).map((row) => [row[1], row[2]])).toEqual(
      inputs.slice(0, 20).map((r) => [r.Channel, r.Outcome]),
    );

    await page.getByRole("link", { name: "Settings" }).click();
    await page.locator("table#people tbody tr").first().waitFor();
    const people = (await api<{ records: { Email: string }[] }>(admin, "users")).records;
    expect((await tableCells(page, "people")).map((row) => row[0])).toEqual(
      people.map((r) => r.Email).sort(),
    );
    const keys = (await api<{ records: unknown[] }>(admin, "api_keys")).records;
    // Each card loads on its own: the keys' table may come after the people's.
    await expect.poll(async () => (await tableCells(page, "keys")).length).toBe(keys.length);
    await page.close();
  });

  it("sorts and pages in the URL, the back button walks it back, and the CSV equals the table", async () => {
    const page = await open(admin, `/senders?${period}&tab=sources`);
    await page.locator("table#sources tbody tr").first().waitFor();
    await page.getByRole("button", { name: "Reporter" }).click();
    await page.waitForURL(/sources_sort=reporter/);
    const byReporter = (await tableCells(page, "sources")).map((row) => row[3]!);
    expect(byReporter).toEqual(
      [...byReporter].sort((a, b) => a.localeCompare(b, "en", { numeric: true, sensitivity: "base" })),
    );
    await page.getByRole("button", { name: "Next" }).click();
    await page.waitForURL(/sources_page=2/);
    const pageTwo = await tableCells(page, "sources");
    await page.goBack();
    await page.waitForURL((url) => !url.search.includes("sources_page"));
    expect((await tableCells(page, "sources")).map((row) => row[3])).toEqual(byReporter);
    await page.goForward();
    await page.waitForURL(/sources_page=2/);
    expect(await tableCells(page, "sources")).toEqual(pageTwo);
    await page.goBack();

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download CSV" }).click(),
    ]);
    const csv = parseCsv(readFileSync((await download.path())!, "utf8"));
    expect(csv[0]).toEqual(await tableHeaders(page, "sources"));
    const all = (await api<{ total: number }>(admin, `aggregate_by_source?${apiPeriod}&per_page=1000`)).total;
    // Every source, not the thousand the table holds (dashboard-rough-edges.test.ts checks each).
    expect(csv.length - 1).toBe(all);
    // The rows shown are the CSV's: the same cells, numbers without their formatting.
    const normalise = (cell: string) =>
      /^[\d,.]+%?$/.test(cell) ? String(shownNumber(cell)) : cell === "–" ? "" : cell;
    const shown = await tableCells(page, "sources");
    const written = new Set(csv.slice(1).map((row) => JSON.stringify(row.map(normalise))));
    for (const row of shown) expect(written).toContain(JSON.stringify(row.map(normalise)));

    // A period chosen is a new entry in the history too.
    await page.getByLabel("Period").selectOption("30d");
    await page.waitForURL(/period=30d/);
    await page.goBack();
    await page.waitForURL(/period=custom/);
    await page.close();
  });

  it("changes what the views show when a domain is added and a report uploaded through the UI", async () => {
    const page = await open(admin, `/?${period}`);
    await page.locator("table#domains tbody tr").first().waitFor();
    const before = await tableCells(page, "domains");
    expect(before.map((row) => row[0])).not.toContain("borschow.com");
    const messagesBefore = shownNumber((await page.locator(".kpi-value").first().textContent())!);

    await page.getByRole("link", { name: "Domains" }).click();
    await page.getByLabel("Domain name").fill("borschow.com");
    await page.getByRole("button", { name: "Add domain" }).click();
    await page.getByText("borschow.com added.").waitFor();

    await page.getByRole("link", { name: "Intake" }).click();
    // Dropped as a file would be: a DataTransfer holding it, on the drop zone.
    const dropped = await page.evaluateHandle((xml) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([xml], "upload-test.xml", { type: "text/xml" }));
      return transfer;
    }, uploadedReport);
    await page.locator(".dropzone").dispatchEvent("drop", { dataTransfer: dropped });
    await page
      .getByText(/upload-test\.xml.*stored: aggregate report for example\.com, 1 rows, 77 messages: stored/)
      .waitFor();

    // Adding it chose it in the domain filter, which the links carry along: all domains again.
    await page.goto(`${origin}/?${period}`);
    await expect
      .poll(async () => (await tableCells(page, "domains")).map((row) => row[0]))
      .toContain("borschow.com");
    const added = (
      await api<{ records: { Domain: string; Volume: string }[] }>(
        admin,
        `aggregate_by_domain?${apiPeriod}&domain=borschow.com`,
      )
    ).records;
    expect(Number(added[0]!.Volume)).toBeGreaterThan(0);
    await expect
      .poll(async () => shownNumber((await page.locator(".kpi-value").first().textContent())!))
      .toBe(messagesBefore + 77 + Number(added[0]!.Volume));
    await page.goto(`${origin}/senders?${period}&tab=unaligned&domain=example.com`);
    await page.getByRole("cell", { name: "198.51.100.77" }).waitFor();
    await page.close();
  });

  it("refuses a viewer's write, and shows a viewer no forms to write with", async () => {
    const page = await open(viewer, `/domains?${period}`);
    await page.locator("table#domainlist tbody tr").first().waitFor();
    expect(await page.getByLabel("Domain name").count()).toBe(0);
    const refused = await page.evaluate(async () => {
      const session = (await (await fetch("/api/session")).json()) as { csrf_token: string };
      const response = await fetch("/api/add-domain", {
        method: "PUT",
        headers: { "X-CSRF-Token": session.csrf_token },
        body: new URLSearchParams({ domain: "viewer.example.com" }),
      });
      return { status: response.status, body: await response.json() };
    });
    expect(refused).toEqual({
      status: 403,
      body: { status: "ERROR", code: "missing_scope", message: "Only an admin of this account can do this." },
    });
    await page.goto(`${origin}/intake?${period}`);
    await page
      .getByText(/Nothing arrived|Received inputs/)
      .first()
      .waitFor();
    expect(await page.locator(".dropzone").count()).toBe(0);
    await page.close();
  });

  it("turns an alert rule off and adds a webhook in the Alerts view, its secret shown once", async () => {
    const page = await open(admin, "/alerts");
    const rule = page.getByLabel("Alert: no reports");
    await rule.waitFor();
    expect(await rule.isChecked()).toBe(true);
    await rule.uncheck();
    await expect
      .poll(
        async () =>
          (await api<{ records: { rule: string; enabled: boolean }[] }>(admin, "alert_rules")).records.find(
            (record) => record.rule === "no_reports",
          )?.enabled,
      )
      .toBe(false);
    await page.getByLabel("Webhook URL").fill("https://hooks.example.com/dmarc");
    await page.getByLabel(/Only these rules/).fill("new_sender");
    await page.getByRole("button", { name: "Add webhook" }).click();
    const secret = await page.getByLabel("Signing secret").inputValue();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole("cell", { name: "https://hooks.example.com/dmarc" }).waitFor();
    const listed = await api<{ records: { url: string; alert_types: string[] }[] }>(admin, "webhooks");
    expect(listed.records).toMatchObject([
      { url: "https://hooks.example.com/dmarc", alert_types: ["new_sender"] },
    ]);
    // Shown once: a new page has it nowhere.
    await page.goto(`${origin}/alerts`);
    await page.getByRole("cell", { name: "https://hooks.example.com/dmarc" }).waitFor();
    expect(await page.content()).not.toContain(secret);
    await page.getByRole("button", { name: "Disable" }).click();
    await expect
      .poll(
        async () => (await api<{ records: { enabled: boolean }[] }>(admin, "webhooks")).records[0]?.enabled,
      )
      .toBe(false);
    // A viewer sees the rules and webhooks (the URL's path masked), and nothing to change them with.
    const viewing = await open(viewer, "/alerts");
    await viewing.getByRole("cell", { name: "https://hooks.example.com/…" }).waitFor();
    expect(await viewing.content()).not.toContain("/dmarc");
    expect(await viewing.getByLabel("Webhook URL").count()).toBe(0);
    expect(await viewing.getByLabel("Alert: no reports").count()).toBe(0);
    await viewing.close();
    await page.close();
  });

  it("shows a session of another tenant nothing of this one", async () => {
    const page = await open(other, `/?${period}`);
    await page.locator("table#domains tbody tr").first().waitFor();
    const text = await page.locator("main").textContent();
    expect(text).toContain("example.de");
    expect(text).not.toMatch(/example\.com|borschow|large-example/);
    await page.goto(`${origin}/?${period}&domain=example.com`);
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toBe("example.com is not one of your domains.");
    await page.close();
  });

  it("shows the Services table as GET aggregate_by_sender, and a service's addresses with their names", async () => {
    const page = await open(admin, `/senders?${period}&tab=services`);
    await page.locator("table#services tbody tr").first().waitFor();
    const senders = await api<{ total: number; records: SenderRecord[] }>(
      admin,
      `aggregate_by_sender?${apiPeriod}&per_page=1000`,
    );
    expect(senders.records.map((r) => r.Service)).toContain("Mailer One");
    const shown = await tableCells(page, "services");
    // The admin's Approved cell (the second) is a choice: the other columns, in the API's order.
    expect(shown.map((row) => [row[0], ...row.slice(2)])).toEqual(
      senders.records
        .slice(0, shown.length)
        .map((r) => [
          r.Service,
          orDash(r.ServiceType),
          r.Domain,
          orDash([r.ASN && `AS${r.ASN}`, r.ASNOrganization].filter(Boolean).join(" ")),
          orDash(r.Country),
          formatCount(r.SourceIPs),
          formatCount(r.Volume),
          formatShare(r.DMARC, r.Volume),
          formatShare(r.SPFAligned, r.Volume),
          formatShare(r.DKIMAligned, r.Volume),
        ]),
    );
    // At 1280 pixels the whole table shows, its last column included, without scrolling sideways.
    const overflow = await page
      .locator("table#services")
      .evaluate((table) => table.parentElement!.scrollWidth - table.parentElement!.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    const mailer = senders.records.find((r) => r.Service === "Mailer One" && r.Domain === "example.com")!;
    expect([mailer.ServiceType, mailer.SourceIPs]).toEqual(["SaaS", "3"]);

    // Drilling down: the service's addresses, named as the API names them and as they were named.
    await page.getByRole("button", { name: "Mailer One", exact: true }).click();
    await page.waitForURL(/sender=example\.com%7CMailer\+One|sender=example\.com\|Mailer/);
    await page.locator("table#sender-ips tbody tr").first().waitFor();
    const sources = (
      await api<{ records: SourceNames[] }>(
        admin,
        `aggregate_by_source?${apiPeriod}&domain=example.com&per_page=1000`,
      )
    ).records.filter((r) => r.Service === "Mailer One");
    expect(new Set(sources.map((r) => r.SourceIp)).size).toBe(3);
    expect(new Set(sources.map((r) => r.ASNOrganization))).toEqual(
      new Set(["Test Network 0", "Test Network 1", "Test Network 2"]),
    );
    const addresses = await tableCells(page, "sender-ips");
    expect(addresses).toEqual(
      sources
        .slice(0, 20)
        .map((r) => [
          r.SourceIp,
          orDash(r.SourceDomain),
          `AS${r.ASN}`,
          r.ASNOrganization,
          r.Country,
          r.Organization,
          formatCount(r.Volume),
          formatShare(r.DMARC, r.Volume),
        ]),
    );
    for (const row of addresses) {
      const index = Number(row[3]!.replace("Test Network ", ""));
      expect([row[2], row[4]]).toEqual([`AS${64_500 + index}`, ["DE", "FR", "US"][index % 3]]);
    }
    await page.close();
  });

  it("approves, refuses and clears a service's approval through the UI, which a viewer cannot", async () => {
    const approval = async () =>
      (
        await api<{ records: SenderRecord[] }>(
          admin,
          `aggregate_by_sender?${apiPeriod}&domain=example.com&per_page=1000`,
        )
      ).records.find((r) => r.Service === "Mailer One")!.Approved;
    expect(await approval()).toBe(null);
    const page = await open(admin, `/senders?${period}&tab=services&domain=example.com`);
    const choice = () => page.getByLabel("Approval of Mailer One for example.com");
    await choice().waitFor();
    expect(await choice().inputValue()).toBe("clear");
    // Each choice reaches the API, and is what the page shows after a reload.
    for (const [value, approved] of [
      ["true", true],
      ["false", false],
      ["clear", null],
      ["false", false],
    ] as const) {
      await choice().selectOption(value);
      await expect.poll(approval).toBe(approved);
      await page.reload();
      await expect.poll(() => choice().inputValue()).toBe(value);
    }
    await page.close();

    const viewing = await open(viewer, `/senders?${period}&tab=services&domain=example.com`);
    const row = viewing.locator("table#services tbody tr", { hasText: "Mailer One" });
    await row.waitFor();
    expect(await viewing.getByLabel("Approval of Mailer One for example.com").count()).toBe(0);
    expect((await row.locator("td").nth(1).textContent())?.trim()).toBe("no");
    await viewing.getByText("Approving a service needs an admin.").waitFor();
    const refused = await viewing.evaluate(async () => {
      const session = (await (await fetch("/api/session")).json()) as { csrf_token: string };
      const response = await fetch("/api/sender_approval", {
        method: "PUT",
        headers: { "X-CSRF-Token": session.csrf_token },
        body: new URLSearchParams({ domain: "example.com", service: "Mailer One", approved: "true" }),
      });
      return response.status;
    });
    expect(refused).toBe(403);
    expect(await approval()).toBe(false);
    await viewing.close();

    // An address joins the service after it is approved: the approval says so and lists it, and
    // approving again records it and clears that.
    const approving = await open(admin, `/senders?${period}&tab=services&domain=example.com`);
    const approvalChoice = approving.getByLabel("Approval of Mailer One for example.com");
    await approvalChoice.selectOption("true");
    await expect.poll(approval).toBe(true);
    const sources = await api<{ records: { SourceIp: string }[] }>(
      admin,
      `aggregate_by_source?${apiPeriod}&domain=example.com&per_page=1000`,
    );
    // The busiest address the test did not name (beforeAll named the first six).
    const joining = [...new Set(sources.records.map((r) => r.SourceIp))][6]!;
    const renamed = await handle.runtime.store.append(
      streams.sourceIp(joining),
      [namedSourceIp(joining, namingOf(0))],
      "any",
    );
    expect(await waitForProjections(handle.runtime.db, allProjections, renamed.position, 30_000)).toBe(true);
    const added = async () =>
      (
        await api<{ records: { Kind: string; Sender: string; AddedSinceApproval: string[] | null }[] }>(
          admin,
          `sender_approvals?${apiPeriod}&domain=example.com`,
        )
      ).records.find((r) => r.Kind === "service" && r.Sender === "Mailer One")!.AddedSinceApproval;
    expect(await added()).toEqual([joining]);
    await approving.reload();
    const badge = approving.getByRole("button", { name: "1 address added since approval" });
    await badge.click();
    await approving.waitForURL(/added=example\.com/);
    await expect.poll(() => approving.locator("#added-addresses li").allTextContents()).toEqual([joining]);
    await approving.getByRole("button", { name: "Approve Mailer One again with these addresses" }).click();
    await expect.poll(added).toEqual([]);
    await approving.reload();
    await approvalChoice.waitFor();
    expect(await approving.getByRole("button", { name: /added since approval/ }).count()).toBe(0);
    // Back to refused, as the views after this one read it.
    await approvalChoice.selectOption("false");
    await expect.poll(approval).toBe(false);
    await approving.close();
  });

  it("shows the Policy view as GET policy_impact, for quarantine and for reject, totals included", async () => {
    const page = await open(admin, `/policy?${period}`);
    for (const policy of ["quarantine", "reject"] as const) {
      await page.getByRole("combobox", { name: "Policy", exact: true }).selectOption(policy);
      await page.waitForURL(policy === "quarantine" ? /policy=quarantine/ : /policy=reject/);
      const impact = await api<PolicyImpact>(
        admin,
        `policy_impact?${apiPeriod}&policy=${policy}&per_page=1000`,
      );
      expect(Number(impact.totals.Stopped)).toBeGreaterThan(0);
      const t = impact.totals;
      await expect
        .poll(() => page.locator("#policy-totals").textContent())
        .toBe(
          `Of ${formatCount(t.Volume)} messages (${formatCount(t.DMARC)} passing DMARC), p=${policy} would stop ${formatCount(t.Stopped)}: ${formatCount(t.LegitimateAtRisk)} legitimate at risk, ${formatCount(t.AbuseStopped)} abuse.`,
        );
      await expect
        .poll(async () => (await tableCells(page, "policy")).map((row) => row[2]))
        .toEqual(impact.records.slice(0, 20).map((r) => formatCount(r.Stopped)));
      expect(await tableCells(page, "policy")).toEqual(
        impact.records
          .slice(0, 20)
          .map((r) => [
            r.Domain,
            r.Service,
            formatCount(r.Stopped),
            formatCount(r.LegitimateAtRisk),
            formatCount(r.AbuseStopped),
            formatCount(r.Forwarded),
            orDash(r.ServiceType),
            shownApproval(r.Approved),
          ]),
      );
      // The totals are the records' sums over every sender.
      const sum = (key: "Stopped" | "LegitimateAtRisk") =>
        impact.records.reduce((total, r) => total + Number(r[key]), 0);
      expect([sum("Stopped"), sum("LegitimateAtRisk")]).toEqual([
        Number(t.Stopped),
        Number(t.LegitimateAtRisk),
      ]);
    }
    // A shared link shows the same policy.
    await page.goto(`${origin}/policy?${period}&policy=quarantine`);
    await expect
      .poll(() => page.getByRole("combobox", { name: "Policy", exact: true }).inputValue())
      .toBe("quarantine");
    await page.close();
  });

  it("downloads the Services and Policy tables as CSV equal to the tables", async () => {
    for (const [path, table, total] of [
      [`/senders?${period}&tab=services`, "services", `aggregate_by_sender?${apiPeriod}&per_page=1000`],
      [
        `/policy?${period}&policy=quarantine`,
        "policy",
        `policy_impact?${apiPeriod}&policy=quarantine&per_page=1000`,
      ],
    ] as const) {
      // A viewer's: an admin's Approved cells are checkboxes, which the CSV writes as yes or no.
      const page = await open(viewer, path);
      await page.locator(`table#${table} tbody tr`).first().waitFor();
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("button", { name: "Download CSV" }).click(),
      ]);
      const csv = parseCsv(readFileSync((await download.path())!, "utf8"));
      expect(csv[0]).toEqual(await tableHeaders(page, table));
      expect(csv.length - 1).toBe(Number((await api<{ total: number }>(viewer, total)).total));
      const shown = await tableCells(page, table);
      expect(csv.slice(1, shown.length + 1).map((row) => row.map(normaliseCell))).toEqual(
        shown.map((row) => row.map(normaliseCell)),
      );
      await page.close();
    }
  });

  it("has no serious or critical axe violation on any view, and writes screenshots at 1280 and 390 pixels", async () => {
    const views = [
      ["overview", `/?${period}`],
      ["senders", `/senders?${period}&tab=services&sender=example.com%7CMailer+One`],
      ["sources", `/senders?${period}&tab=sources`],
      ["policy", `/policy?${period}`],
      ["reporters", `/reporters?${period}`],
      ["failure-reports", `/failures?${period}&report=1`],
      ["domains", `/domains?${period}&domain=example.com`],
      ["intake", "/intake?period=7d"],
      ["settings", "/settings"],
    ] as const;
    const page = await open(admin, "/");
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width === 1280 ? 900 : 844 });
      for (const [name, path] of views) {
        await page.goto(`${origin}${path}`);
        await page.locator("main .card, main .empty").first().waitFor();
        await page.waitForLoadState("networkidle");
        // Charts draw once their chunk is loaded.
        if (name === "overview" || name === "sources" || name === "reporters")
          await page.locator('[role="img"] svg').first().waitFor();
        if (width === 1280) {
          const violations = await seriousAxeViolations(page);
          expect(violations, `${name}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
        }
        // Wide tables scroll within their card: the page itself is never wider than the window.
        expect(await page.evaluate(() => document.documentElement.scrollWidth), name).toBe(width);
        await page.screenshot({ path: `${screenshots}${name}-${width}.png`, fullPage: true });
      }
    }
    const signIn = await browser.newContext({ viewport: { width: 390, height: 844 }, bypassCSP: true });
    const signInPage = await open(signIn, "/");
    await signInPage.getByRole("button", { name: "Sign in" }).waitFor();
    expect(await seriousAxeViolations(signInPage)).toEqual([]);
    await signIn.close();
    expect(consoleErrors).toEqual([]);
  });
});
