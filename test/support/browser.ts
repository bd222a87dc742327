import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

// The browser's globals the functions handed to page.evaluate touch, declared here: they run in
// the page, and the tests' program is typed for node, without the DOM's types.
declare const window: object;
declare const document: unknown;
interface ElementLike {
  textContent: string | null;
  querySelectorAll(selector: string): ArrayLike<ElementLike>;
}

/** Debian's chromium: the tests never download a browser. */
export const chromiumPath = "/usr/bin/chromium";

/**
 * Said at once, with what to run, when the browser is missing: `pnpm test` installs it first
 * (scripts/test-prerequisites.mjs), and a person running one file by hand needs the same line.
 */
export function requireChromium(): void {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `${chromiumPath} is missing: the browser tests run Debian's chromium. Install it with: sudo apt-get install -y --no-install-recommends chromium`,
    );
  }
}

/**
 * Headless chromium as this closed network allows it: without the background connections
 * (component updates, sync, QUIC) it would try and be refused.
 */
export function launchChromium(): Promise<Browser> {
  requireChromium();
  return chromium.launch({
    executablePath: chromiumPath,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

const axeSource = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/**
 * axe-core's serious and critical violations on the page as it is (WCAG 2 A and AA rules and best
 * practices). The page's context must allow the injected script (bypassCSP): the dashboard's
 * policy allows scripts of its own origin only.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ path: axeSource });
  const violations = await page.evaluate(async () => {
    const axe = (
      window as {
        axe: { run(context: unknown, options: object): Promise<{ violations: AxeViolation[] }> };
      }
    ).axe;
    const results = await axe.run(document, { resultTypes: ["violations"] });
    return results.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target })),
    }));
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** The text of each cell of a table's body, row by row. */
export function tableCells(page: Page, tableId: string): Promise<string[][]> {
  return page.$$eval(`table#${tableId} tbody tr`, (rows) =>
    rows.map((row) =>
      Array.from((row as unknown as ElementLike).querySelectorAll("td"), (cell) =>
        (cell.textContent ?? "").trim(),
      ),
    ),
  );
}

export function tableHeaders(page: Page, tableId: string): Promise<string[]> {
  return page.$$eval(`table#${tableId} thead th`, (cells) =>
    cells.map((cell) => ((cell as unknown as ElementLike).textContent ?? "").replace(/[▲▼]/g, "").trim()),
  );
}

/** "8,398" and "72.7%" as the numbers they show. */
export const shownNumber = (text: string) => Number(text.replace(/[,%]/g, ""));

/**
 * A new page of `context` at `url`, its console errors and failed page scripts pushed to `errors`.
 * Refusals a test provokes (401, 403, 404) are the API's answers, logged by the browser as failed
 * resources: not faults; anything else said on the console is.
 */
export async function openWatched(context: BrowserContext, url: string, errors: string[]): Promise<Page> {
  const page = await context.newPage();
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
      errors.push(message.text());
    }
  });
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(url);
  return page;
}
