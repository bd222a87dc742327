/**
 * The README's screenshots, from a demo tenant (`dmarc-ledger demo`, 90 days) in chromium: the
 * Overview, Policy and Senders views show the real services the shipped databases name. Written
 * to docs/screenshots/run/readme/ (ignored by git): copied to docs/screenshots/, they are the
 * README's.
 */
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, openWatched, requireChromium } from "../support/browser.js";
import { builtWeb } from "../support/built-processes.js";
import { addPerson } from "../support/dashboard-session.js";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

const screenshots = fileURLToPath(new URL("../../docs/screenshots/run/readme/", import.meta.url));
const password = "demo admin's long password";
const services = [
  "Amazon SES",
  "Twilio SendGrid",
  "Intuit Mailchimp",
  "Google (Including Gmail and Google Workspace)",
];

describe("the README's screenshots, from the demo tenant", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let browser: Browser;
  let admin: BrowserContext;
  let origin: string;
  const consoleErrors: string[] = [];

  const open = (path: string): Promise<Page> => openWatched(admin, `${origin}${path}`, consoleErrors);

  beforeAll(async () => {
    requireChromium();
    [backend] = await Promise.all([postgresBackend(), builtWeb()]);
    // A finding is sent 5 s after its reports, not after the usual 30 s (docs/alerts.md).
    handle = await startTestService({ ...backend.env, SOURCE_IP_RESOLVER: "off", ALERT_SETTLE: "5s" });
    origin = new URL(handle.service.apiRoot).origin;
    const demo = await cli(backend.env, "demo", "--json");
    expect(demo.code, demo.err).toBe(0);
    const env = { ...backend.env, PUBLIC_BASE_URL: handle.service.apiRoot };
    await addPerson(env, handle.service.apiRoot, "demo", "admin@demo.example", "admin", password);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { count } = await handle.runtime.db
        .selectFrom("agg_sender_fact as f")
        .leftJoin("source_ip_name as n", "n.source_ip", "f.source_ip")
        .select((eb) => eb.fn.count<string>("f.source_ip").distinct().as("count"))
        .where("n.source_ip", "is", null)
        .executeTakeFirstOrThrow();
      if (Number(count) === 0) break;
      if (Date.now() > deadline) throw new Error("sources still unnamed after 60 s");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    browser = await launchChromium();
    admin = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    const page = await open("/");
    await page.getByLabel("E-mail address").fill("admin@demo.example");
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Views" }).waitFor();
    await page.close();
    mkdirSync(screenshots, { recursive: true });
  }, 600_000);

  afterAll(async () => {
    await browser?.close();
    await handle?.stop();
    await backend?.cleanup();
  });

  it("shows the named services on the Senders view, and takes the README's screenshot of it", async () => {
    const page = await open("/senders?period=90d&tab=services&sender=example.com%7CAmazon+SES");
    await page.locator("main .card table tbody tr").first().waitFor();
    await page.waitForLoadState("networkidle");
    const text = (await page.locator("main").textContent()) ?? "";
    for (const service of services) expect(text, service).toContain(service);
    await page.screenshot({ path: `${screenshots}senders.png`, fullPage: true });
    await page.close();
  });

  it("shows the named services on the Policy view", async () => {
    const page = await open("/policy?period=90d");
    await page.locator("main .card table tbody tr").first().waitFor();
    await page.waitForLoadState("networkidle");
    const text = (await page.locator("main").textContent()) ?? "";
    // example.org's help desk on SendGrid, not signing as the domain yet.
    expect(text).toContain("Twilio SendGrid");
    await page.close();
  });

  it("shows the demo's domains on the Overview, and takes the README's screenshot of it", async () => {
    const page = await open("/?period=90d");
    await page.locator("table#domains tbody tr").first().waitFor();
    await page.locator('[role="img"] svg').first().waitFor();
    await page.waitForLoadState("networkidle");
    const text = (await page.locator("main").textContent()) ?? "";
    for (const domain of ["example.com", "example.net", "example.org"]) expect(text).toContain(domain);
    await page.screenshot({ path: `${screenshots}overview.png`, fullPage: true });
    await page.close();
    expect(consoleErrors).toEqual([]);
  });

  it("lists the demo's alerts of its last days on the Alerts view, and takes the README's screenshot", async () => {
    // The demo's last days bring senders failing DMARC that no one approved: findings of the
    // report days inside the rules' window, sent once they settle.
    const alerts = async () =>
      (
        await handle.runtime.db
          .selectFrom("alert" as never)
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .executeTakeFirstOrThrow()
      ).n;
    const deadline = Date.now() + 120_000;
    while (Number(await alerts()) === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));
    const page = await open("/alerts?period=90d");
    await page.getByRole("heading", { name: "Alerts", level: 1 }).waitFor();
    await page.waitForLoadState("networkidle");
    const text = (await page.locator("main").textContent()) ?? "";
    expect(text).toMatch(/Unapproved sender|New sender|DMARC failure share/);
    await page.screenshot({ path: `${screenshots}alerts.png`, fullPage: true });
    await page.close();
    expect(consoleErrors).toEqual([]);
  });
});
