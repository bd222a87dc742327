/**
 * The dashboard's TLS view and the Overview's TLS health in chromium, over the SMTP TLS report
 * files of packages/tls-reports: the tables against the API's records, the failures by type
 * summed independently from tls_failures, the CSV against the table, no serious axe violation,
 * and screenshots at 1280 and 390 pixels (docs/screenshots/run/tls-*.png).
 */
import { mkdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCsv } from "../../apps/web/src/lib/csv.js";
import { fixturesDir } from "../../packages/tls-reports/test/fixtures.js";
import {
  launchChromium,
  openWatched,
  requireChromium,
  seriousAxeViolations,
  tableCells,
  tableHeaders,
} from "../support/browser.js";
import { builtWeb } from "../support/built-processes.js";
import { addPerson } from "../support/dashboard-session.js";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

declare const document: { documentElement: { scrollWidth: number } };

const screenshots = fileURLToPath(new URL("../../docs/screenshots/run/", import.meta.url));
const period = "period=custom&from=2016-03-01&to=2016-05-01";
const apiPeriod = `start=${Date.UTC(2016, 2, 1) / 1000}&end=${Date.UTC(2016, 4, 1, 23, 59, 59) / 1000}`;
const password = "acme admin's long password";
const formatCount = (value: string | number) => new Intl.NumberFormat("en").format(Number(value));
const formatShare = (part: string | number, whole: string | number) =>
  Number(whole) === 0 ? "–" : `${(Math.round((Number(part) / Number(whole)) * 1000) / 10).toFixed(1)}%`;

interface TlsDomain {
  Domain: string;
  PolicyType: string;
  Reports: string;
  Sessions: string;
  Successful: string;
  Failed: string;
}
interface TlsFailure {
  Domain: string;
  PolicyType: string;
  ResultType: string;
  SendingMtaIp: string;
  ReceivingMxHostname: string;
  ReceivingIp: string;
  Organization: string;
  FailedSessions: string;
}

describe("the TLS view in a real browser", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let browser: Browser;
  let origin: string;
  let admin: BrowserContext;
  const consoleErrors: string[] = [];

  const open = (path: string): Promise<Page> => openWatched(admin, `${origin}${path}`, consoleErrors);
  async function api<T>(path: string): Promise<T> {
    const response = await admin.request.get(`${origin}/api/${path}`);
    expect(response.status(), path).toBe(200);
    return (await response.json()) as T;
  }

  beforeAll(async () => {
    requireChromium();
    [backend] = await Promise.all([postgresBackend(), builtWeb()]);
    handle = await startTestService(backend.env);
    origin = new URL(handle.service.apiRoot).origin;
    const meta = { causedBy: "test" };
    const acme = await createTenant(handle.runtime.store, { name: "acme", region: "global" }, meta);
    for (const domain of ["example.com", "example.org"])
      await addDomain(handle.runtime.store, { tenantId: acme.tenantId, domain }, meta);
    const env = { ...backend.env, PUBLIC_BASE_URL: handle.service.apiRoot };
    // The fixtures' README is no report: refused and kept (exit 2), the reports stored.
    const imported = await cli(env, "import", fixturesDir);
    expect(imported.out, imported.err).toContain("6 reports stored");
    await addPerson(env, handle.service.apiRoot, "acme", "admin@acme.example", "admin", password);
    browser = await launchChromium();
    admin = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    const page = await open("/");
    await page.getByLabel("E-mail address").fill("admin@acme.example");
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Views" }).waitFor();
    await page.close();
    mkdirSync(screenshots, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await handle?.stop();
    await backend?.cleanup();
  });

  it("shows the API's sessions per policy domain and the failures by type, MX and reporter", async () => {
    const page = await open(`/tls?${period}`);
    await page.locator("table#tls-domains tbody tr").first().waitFor();
    const domains = (await api<{ records: TlsDomain[] }>(`tls_by_domain?${apiPeriod}&per_page=1000`)).records;
    expect(domains.length).toBeGreaterThan(1);
    expect(await tableCells(page, "tls-domains")).toEqual(
      domains.map((r) => [
        r.Domain,
        r.PolicyType,
        formatCount(r.Reports),
        formatCount(r.Sessions),
        formatCount(r.Successful),
        formatCount(r.Failed),
        formatShare(r.Failed, r.Sessions),
      ]),
    );
    const failures = (await api<{ records: TlsFailure[] }>(`tls_failures?${apiPeriod}&per_page=1000`))
      .records;
    for (const [table, field] of [
      ["tls-result", "ResultType"],
      ["tls-mx", "ReceivingMxHostname"],
      ["tls-reporter", "Organization"],
    ] as const) {
      const sums = new Map<string, number>();
      for (const r of failures) sums.set(r[field], (sums.get(r[field]) ?? 0) + Number(r.FailedSessions));
      const expected = [...sums]
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .slice(0, 10)
        .map(([key, failed]) => [key || "–", formatCount(failed)]);
      expect(await tableCells(page, table), table).toEqual(expected);
    }
    expect((await tableCells(page, "tls-result")).map((row) => row[0])).toContain("certificate-revoked");
    // The CSV holds every failure row, as the table shows them ("–" empty).
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page
        .locator("section", { has: page.locator("#tls-failures-card") })
        .getByRole("button", { name: "Download CSV" })
        .click(),
    ]);
    const csv = parseCsv(readFileSync((await download.path())!, "utf8"));
    expect(csv[0]).toEqual(await tableHeaders(page, "tls-failures"));
    expect(csv.length - 1).toBe(failures.length);
    const shown = await tableCells(page, "tls-failures");
    expect(csv.slice(1, shown.length + 1)).toEqual(
      shown.map((row) =>
        row.map((cell, index) => (cell === "–" ? "" : index === 7 ? cell.replace(/,/g, "") : cell)),
      ),
    );
    await page.close();
  });

  it("narrows to one domain with the filter, and shows TLS health on the Overview", async () => {
    const page = await open(`/tls?${period}&domain=example.org`);
    await page.locator("table#tls-domains tbody tr").first().waitFor();
    expect((await tableCells(page, "tls-domains")).map((row) => row[0])).toEqual([
      "example.org",
      "example.org",
    ]);
    const domains = (await api<{ records: TlsDomain[] }>(`tls_by_domain?${apiPeriod}&per_page=1000`)).records;
    const sessions = domains.reduce((sum, r) => sum + Number(r.Sessions), 0);
    const failed = domains.reduce((sum, r) => sum + Number(r.Failed), 0);
    await page.goto(`${origin}/?${period}`);
    const health = page.locator("#tls-health");
    await health.waitFor();
    expect(await health.locator(".kpi-value").textContent()).toBe(formatShare(failed, sessions));
    expect(await health.locator(".kpi-change").textContent()).toContain(
      `${formatCount(failed)} of ${formatCount(sessions)}`,
    );
    await page.close();
  });

  it("has no serious axe violation, fits the window, and writes screenshots at 1280 and 390 pixels", async () => {
    const page = await open("/");
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width === 1280 ? 900 : 844 });
      for (const [name, path] of [
        ["tls", `/tls?${period}`],
        ["overview-tls", `/?${period}`],
      ] as const) {
        await page.goto(`${origin}${path}`);
        await page.locator("main .card, main .empty, main .kpi").first().waitFor();
        await page.waitForLoadState("networkidle");
        if (name === "tls") await page.locator('[role="img"] svg').first().waitFor();
        if (width === 1280) {
          const violations = await seriousAxeViolations(page);
          expect(violations, `${name}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
        }
        expect(await page.evaluate(() => document.documentElement.scrollWidth), name).toBe(width);
        await page.screenshot({ path: `${screenshots}${name}-${width}.png`, fullPage: true });
      }
    }
    expect(consoleErrors).toEqual([]);
  });
});
