import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { addEndpoint, setAlertRule } from "@dmarc-ledger/alerts";
import { runtimeDataKeys } from "@dmarc-ledger/runtime";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fieldLabel, fieldValue } from "../../apps/web/src/lib/alert-words.js";
import { waitForAlertsSettled } from "../support/alerts-settled.js";
import {
  launchChromium,
  openWatched,
  requireChromium,
  seriousAxeViolations,
  tableCells,
} from "../support/browser.js";
import { builtWeb } from "../support/built-processes.js";
import { addPerson } from "../support/dashboard-session.js";
import { corpusReportOnDay, utcDayStart } from "../support/recent-corpus.js";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { waitForEverySourceNamed } from "../support/sources-named.js";
import { eventually, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

declare const document: { documentElement: { scrollWidth: number } };

/** Where the run writes its screenshots (docs/screenshots/README.md). */
const screenshots = fileURLToPath(new URL("../../docs/screenshots/run/", import.meta.url));

const password = { admin: "acme admin's long password", viewer: "acme viewer's long password" };

interface Listed<T> {
  total: number;
  records: T[];
}
interface Alert {
  id: string;
  rule: string;
  domain: string | null;
  summary: string;
  period: { start: string; end: string };
  figures: Record<string, string | number | boolean | null>;
  items: Record<string, string | number | boolean | null>[];
  acknowledged_at: string | null;
  acknowledged_by: string | null;
}
interface Rule {
  rule: string;
  enabled: boolean;
  params: Record<string, number>;
}
interface Hook {
  id: string;
  url: string;
  enabled: boolean;
  health: { last_failure: string | null; failing_since: string | null; pending: number };
}
interface Delivery {
  id: string;
  alert_id: string;
}

// The last 7 days, as the dashboard's period control says them and as the API takes them.
const period = "period=7d";
const apiPeriod = () => `start=${utcDayStart(6)}&end=${utcDayStart(0) + 86_399}`;

describe("the Alerts view in a real browser, on real reports and a failing webhook", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let browser: Browser;
  let origin: string;
  let admin: BrowserContext;
  let viewer: BrowserContext;
  let receiver: WebhookReceiver;
  let reports: string;
  const consoleErrors: string[] = [];

  const open = (context: BrowserContext, path: string) =>
    openWatched(context, `${origin}${path}`, consoleErrors);

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

  /** The rows of the alerts table once it shows `count` of them. */
  async function alertRows(page: Page, count: number): Promise<string[][]> {
    await expect.poll(async () => (await tableCells(page, "alerts")).length).toBe(Math.min(count, 20));
    return tableCells(page, "alerts");
  }

  beforeAll(async () => {
    requireChromium();
    [backend] = await Promise.all([postgresBackend(), builtWeb()]);
    handle = await startTestService({
      ...backend.env,
      // The receiver listens on loopback.
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: "yes",
      WEBHOOK_RETRY_BASE: "50ms",
      WEBHOOK_RETRY_MAX: "200ms",
      // Not waiting for the resolver to name a new sender: new_sender by its address at once.
      ALERT_NAME_WAIT: "0s",
      // A finding is sent as soon as the evaluator has it.
      ALERT_SETTLE: "0s",
      DNS_NAMESERVERS: "127.0.0.1:9",
    });
    origin = new URL(handle.service.apiRoot).origin;
    const meta = { causedBy: "test" };
    const acme = await createTenant(handle.runtime.store, { name: "acme", region: "global" }, meta);
    await addDomain(handle.runtime.store, { tenantId: acme.tenantId, domain: "example.com" }, meta);
    // A day of a handful of messages is judged too: yesterday's failure share raises an alert.
    await setAlertRule(
      handle.runtime.store,
      { tenantId: acme.tenantId, rule: "dmarc_failure_share", enabled: true, params: { min_messages: 1 } },
      meta,
    );
    // Every delivery to it fails: the endpoint must show as failing, not as enabled.
    receiver = await startWebhookReceiver();
    receiver.answer = () => 503;
    await addEndpoint(
      handle.runtime.store,
      handle.runtime.db,
      { tenantId: acme.tenantId, url: receiver.url, description: "ops" },
      meta,
      { allowPrivate: true, keys: await runtimeDataKeys(handle.runtime, backend.env) },
    );
    // Real reports moved to recent days: the first is the domain's baseline, the next day's bring
    // new senders and mail failing DMARC.
    reports = mkdtempSync(join(tmpdir(), "dl-alerts-view-"));
    const baseline = join(reports, "baseline");
    const next = join(reports, "next");
    mkdirSync(baseline);
    mkdirSync(next);
    writeFileSync(
      join(baseline, "report.xml"),
      await corpusReportOnDay(
        "rfc9990-example.net!example.com!1700000000!1700086399.xml",
        utcDayStart(2),
        "view",
      ),
    );
    for (const name of [
      "usssa.com!example.com!1538784000!1538870399.xml",
      "veeam.com!example.com!1530133200!1530219600.xml",
      "addisonfoods.com!example.com!1536105600!1536191999.xml",
      "protection.outlook.com!example.com!1711756800!1711843200.xml",
    ]) {
      writeFileSync(join(next, name), await corpusReportOnDay(name, utcDayStart(1), "view"));
    }
    const env = { ...backend.env, PUBLIC_BASE_URL: handle.service.apiRoot };
    for (const dir of [baseline, next]) {
      const imported = await cli(env, "import", dir);
      expect(imported.code, imported.err).toBe(0);
    }
    const root = handle.service.apiRoot;
    await addPerson(env, root, "acme", "admin@acme.example", "admin", password.admin);
    await addPerson(env, root, "acme", "viewer@acme.example", "viewer", password.viewer);
    await waitForEverySourceNamed(handle.runtime);
    await waitForAlertsSettled(handle.runtime);
    await eventually(() => receiver.attempts.length > 0, "a delivery attempted", 30_000);
    browser = await launchChromium();
    [admin, viewer] = await Promise.all([
      signedIn("admin@acme.example", password.admin),
      signedIn("viewer@acme.example", password.viewer),
    ]);
    mkdirSync(screenshots, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await handle?.stop();
    await receiver?.close();
    await backend?.cleanup();
    if (reports) rmSync(reports, { recursive: true, force: true });
  });

  it("lists the period's open alerts as the API does, and filters them by rule", async () => {
    const listed = await api<Listed<Alert>>(admin, `alerts?${apiPeriod()}&state=open&per_page=1000`);
    const rules = new Set(listed.records.map((alert) => alert.rule));
    expect(rules).toContain("new_sender");
    expect(rules).toContain("dmarc_failure_share");
    const page = await open(admin, `/alerts?${period}`);
    const rows = await alertRows(page, listed.total);
    expect(rows.map((row) => row[4]).sort()).toEqual(
      listed.records
        .slice(0, 20)
        .map((alert) => alert.summary)
        .sort(),
    );
    expect(rows.every((row) => row[5] === "open")).toBe(true);

    await page.getByRole("combobox", { name: /^Rule/ }).selectOption("new_sender");
    const senders = await api<Listed<Alert>>(
      admin,
      `alerts?${apiPeriod()}&state=open&rule=new_sender&per_page=1000`,
    );
    const filtered = await alertRows(page, senders.total);
    expect(filtered.every((row) => row[1] === "New sender" && row[2] === "example.com")).toBe(true);
    expect(new URL(page.url()).searchParams.get("rule")).toBe("new_sender");
    await page.close();
  });

  it("opens an alert: its figures in words and a link to the view that shows them", async () => {
    const listed = await api<Listed<Alert>>(
      admin,
      `alerts?${apiPeriod()}&rule=dmarc_failure_share&per_page=1000`,
    );
    const share = listed.records[0]!;
    const page = await open(admin, `/alerts?${period}&rule=dmarc_failure_share`);
    await page.getByRole("button", { name: share.summary }).click();
    const detail = page.locator("section[aria-labelledby='alert-detail']");
    await detail.waitFor();
    const terms = await detail.locator("dl.facts dt").allTextContents();
    const values = await detail.locator("dl.facts dd").allTextContents();
    const shown = new Map(terms.map((term, index) => [term, values[index]]));
    const figures = Object.entries(share.figures);
    expect(figures.length).toBeGreaterThan(0);
    for (const [name, value] of figures) {
      // Each figure under its label, never under the API's field name.
      expect(shown.get(fieldLabel(name)), name).toBe(fieldValue(name, value));
      if (/[A-Z_]/.test(name)) expect(terms).not.toContain(name);
    }
    // The share as a person reads it: the number with its percent sign.
    const percent = figures.find(([name]) => /percent/i.test(name) && !/threshold|baseline/i.test(name));
    expect(percent, "the failing share among the figures").toBeDefined();
    expect(shown.get(fieldLabel(percent![0]))).toBe(`${percent![1]}%`);
    // Its members, when the finding has any: one row each (a page of 10).
    if (share.items.length > 0) {
      expect(await page.locator("table#alertitems tbody tr").count()).toBe(Math.min(share.items.length, 10));
    }
    const link = detail.getByRole("link", { name: "Overview of the domain in the window" });
    await link.click();
    await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
    const url = new URL(page.url());
    expect(url.pathname).toBe("/");
    expect(url.searchParams.get("domain")).toBe("example.com");
    expect(url.searchParams.get("to")).toBe(share.period.end.slice(0, 10));

    // A new sender links to the senders of its domain and day.
    const senders = await api<Listed<Alert>>(admin, `alerts?${apiPeriod()}&rule=new_sender&per_page=1`);
    const sender = senders.records[0]!;
    await page.goto(`${origin}/alerts?${period}&rule=new_sender&alert=${encodeURIComponent(sender.id)}`);
    const senderLink = page.getByRole("link", { name: "Senders of the domain that day" });
    await senderLink.click();
    await page.getByRole("heading", { name: "Senders", level: 1 }).waitFor();
    const senderUrl = new URL(page.url());
    expect(senderUrl.searchParams.get("domain")).toBe("example.com");
    expect(senderUrl.searchParams.get("from")).toBe(sender.period.start.slice(0, 10));
    await page.close();
  });

  it("acknowledges an alert: it leaves the open list and shows among the acknowledged", async () => {
    const before = await api<Listed<Alert>>(admin, `alerts?${apiPeriod()}&state=open&per_page=1000`);
    const chosen = before.records.find((alert) => alert.rule === "new_sender")!;
    // A viewer reads the alert, and has nothing to acknowledge it with.
    const viewing = await open(viewer, `/alerts?${period}&alert=${encodeURIComponent(chosen.id)}`);
    await viewing.locator("section[aria-labelledby='alert-detail']").waitFor();
    expect(await viewing.getByRole("button", { name: "Acknowledge" }).count()).toBe(0);
    await viewing.close();

    const page = await open(admin, `/alerts?${period}&alert=${encodeURIComponent(chosen.id)}`);
    await page.getByRole("button", { name: "Acknowledge" }).click();
    await alertRows(page, before.total - 1);
    const acknowledged = await api<Listed<Alert>>(admin, `alerts?${apiPeriod()}&state=acknowledged`);
    expect(acknowledged.records.map((alert) => alert.id)).toEqual([chosen.id]);
    expect(acknowledged.records[0]!.acknowledged_by).toMatch(/^user:/);
    expect((await tableCells(page, "alerts")).map((row) => row[4])).not.toContain(chosen.summary);

    await page.getByRole("combobox", { name: /^State/ }).selectOption("acknowledged");
    const rows = await alertRows(page, 1);
    expect(rows[0]![4]).toBe(chosen.summary);
    expect(rows[0]![5]).toBe("acknowledged");
    // Who acknowledged it, as each reader knows them.
    await page.getByRole("button", { name: chosen.summary }).click();
    const state = page.locator("section[aria-labelledby='alert-detail'] dd").nth(3);
    await expect.poll(() => state.textContent()).toMatch(/^acknowledged .* UTC by you$/);
    const other = await open(
      viewer,
      `/alerts?${period}&state=acknowledged&alert=${encodeURIComponent(chosen.id)}`,
    );
    const seen = other.locator("section[aria-labelledby='alert-detail'] dd").nth(3);
    await expect.poll(() => seen.textContent()).toMatch(/by another person of the account$/);
    await other.close();
    await page.close();
  });

  it("edits a rule's thresholds and its e-mail, and says which value is wrong", async () => {
    const page = await open(admin, `/alerts?${period}`);
    await page.getByRole("button", { name: "Edit thresholds: no reports" }).click();
    const form = page.getByRole("form", { name: "Thresholds of No reports" });
    await form.getByLabel("Days without a report").fill("5");
    await form.getByRole("button", { name: "Save thresholds" }).click();
    const rule = async (name: string) =>
      (await api<Listed<Rule>>(admin, "alert_rules")).records.find((record) => record.rule === name)!;
    await expect.poll(async () => (await rule("no_reports")).params.days).toBe(5);
    await form.waitFor({ state: "detached" });

    await page.getByRole("button", { name: "Edit thresholds: dmarc failure share" }).click();
    const share = page.getByRole("form", { name: "Thresholds of DMARC failure share" });
    await share.getByLabel("Threshold (% of messages failing)").fill("500");
    await share.getByRole("button", { name: "Save thresholds" }).click();
    await expect.poll(() => page.getByRole("alert").first().textContent()).toMatch(/threshold_percent/);
    expect((await rule("dmarc_failure_share")).params.threshold_percent).toBe(10);
    await share.getByRole("button", { name: "Cancel" }).click();

    const email = page.getByLabel("E-mail: new sender");
    expect(await email.isChecked()).toBe(true);
    await email.uncheck();
    await expect.poll(async () => (await rule("new_sender")).params.email).toBe(0);
    // The rest of the rule as it was.
    expect(await rule("new_sender")).toMatchObject({ enabled: true });
    await page.close();
  });

  it("shows the failing webhook as failing, with its deliveries, and resends one", async () => {
    await eventually(
      async () => (await api<Listed<Hook>>(admin, "webhooks")).records[0]?.health.failing_since !== null,
      "the endpoint failing",
    );
    const [hook] = (await api<Listed<Hook>>(admin, "webhooks")).records;
    expect(hook!.health.last_failure).toBe("http_status 503");
    const page = await open(admin, `/alerts?${period}`);
    const row = page.locator("table#webhooks tbody tr").first();
    await row.waitFor();
    const cells = (await tableCells(page, "webhooks"))[0]!;
    expect(cells[0]).toBe(receiver.url);
    expect(cells[2]).toMatch(/^failing: since .* UTC: http_status 503/);
    expect(cells[2]).not.toContain("enabled");
    expect(cells[4]).toMatch(/^http_status 503, /);

    await row.getByRole("button", { name: "Deliveries" }).click();
    const deliveries = await api<Listed<Delivery>>(
      admin,
      `webhook_deliveries?webhook_id=${hook!.id}&per_page=1000`,
    );
    expect(deliveries.total).toBeGreaterThan(0);
    await expect
      .poll(async () => (await tableCells(page, "deliveries")).length)
      .toBe(Math.min(deliveries.total, 10));
    const shown = await tableCells(page, "deliveries");
    expect(shown.every((cells) => cells[4] === "http_status 503")).toBe(true);

    // Resend the newest: the receiver sees its webhook-id once more.
    const newest = deliveries.records[0]!;
    const seen = receiver.attempts.filter((attempt) => attempt.id === newest.alert_id).length;
    await page.locator("table#deliveries tbody").getByRole("button", { name: "Resend" }).first().click();
    await page.getByText(`Queued to be sent again: ${newest.id}`).waitFor();
    await eventually(
      () => receiver.attempts.filter((attempt) => attempt.id === newest.alert_id).length > seen,
      "the delivery sent again",
    );
    await page.close();
  });

  it("has no serious or critical axe violation, and writes screenshots at 1280 and 390 pixels", async () => {
    const [share] = (
      await api<Listed<Alert>>(admin, `alerts?${apiPeriod()}&rule=dmarc_failure_share&per_page=1`)
    ).records;
    const [newSenders] = (await api<Listed<Alert>>(admin, `alerts?${apiPeriod()}&rule=new_sender&per_page=1`))
      .records;
    const [hook] = (await api<Listed<Hook>>(admin, "webhooks")).records;
    const views = [
      ["alerts", `/alerts?${period}&state=all`],
      ["alert", `/alerts?${period}&state=all&alert=${encodeURIComponent(share!.id)}`],
      ["alert-senders", `/alerts?${period}&state=all&alert=${encodeURIComponent(newSenders!.id)}`],
      ["alert-webhook", `/alerts?${period}&webhook=${hook!.id}#webhooks`],
    ] as const;
    const page = await open(admin, "/");
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width === 1280 ? 900 : 844 });
      for (const [name, path] of views) {
        await page.goto(`${origin}${path}`);
        await page.locator("table#alerts tbody tr").first().waitFor();
        await page.locator("table#webhooks tbody tr").first().waitFor();
        await page.waitForLoadState("networkidle");
        if (width === 1280) {
          const violations = await seriousAxeViolations(page);
          expect(violations, `${name}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
        }
        expect(await page.evaluate(() => document.documentElement.scrollWidth), name).toBe(width);
        await page.screenshot({ path: `${screenshots}${name}-${width}.png`, fullPage: true });
      }
    }
    await page.close();
    expect(consoleErrors).toEqual([]);
  });
});
