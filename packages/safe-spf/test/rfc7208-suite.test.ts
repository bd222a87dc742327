import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { rfc7208Suite } from "../../../test/support/corpus.js";
import { checkHost, createResolver, type SpfResolver } from "../src/index.js";
import { type FixtureDnsServer, type FixtureZones, startFixtureDnsServer } from "../src/testing/index.js";

interface SuiteCase {
  host: string;
  mailfrom: string;
  helo: string;
  result: string | string[];
  explanation?: string;
}

interface SuiteScenario {
  description: string;
  tests: Record<string, SuiteCase>;
  zonedata: FixtureZones;
}

const suitePath = rfc7208Suite;
const scenarios = parseAllDocuments(readFileSync(suitePath, "utf8"))
  .map((document) => document.toJS() as SuiteScenario | null)
  .filter((scenario): scenario is SuiteScenario => scenario !== null);

/** Cases not run, with the reason. */
const skipped: Record<string, string> = {};

it("reads all 203 cases of the suite", () => {
  expect(scenarios.reduce((sum, scenario) => sum + Object.keys(scenario.tests).length, 0)).toBe(203);
});

for (const scenario of scenarios) {
  describe(scenario.description, () => {
    let server: FixtureDnsServer;
    let resolver: SpfResolver;
    beforeAll(async () => {
      server = await startFixtureDnsServer(scenario.zonedata);
      // TIMEOUT entries stay silent: where a scenario has them, a short timeout without retries
      // keeps the suite fast. Elsewhere every answer comes, and a long timeout keeps a loaded
      // machine's late answer from turning into a temperror.
      const silent = JSON.stringify(scenario.zonedata).includes("TIMEOUT");
      resolver = createResolver({
        nameservers: [server.address],
        timeoutMs: silent ? 200 : 5000,
        retries: 0,
      });
    });
    afterAll(() => server.close());

    for (const [name, testCase] of Object.entries(scenario.tests)) {
      const run = skipped[name] ? it.skip : it;
      run(name, async () => {
        const at = testCase.mailfrom.lastIndexOf("@");
        const domain = testCase.mailfrom ? testCase.mailfrom.slice(at + 1) : testCase.helo;
        const sender = testCase.mailfrom || `postmaster@${testCase.helo}`;
        const verdict = await checkHost(testCase.host, domain, sender, { resolver, helo: testCase.helo });
        expect([testCase.result].flat()).toContain(verdict.result);
        if (testCase.explanation === "DEFAULT") expect(verdict.explanation).toBeUndefined();
        else if (testCase.explanation !== undefined) expect(verdict.explanation).toBe(testCase.explanation);
      });
    }
  });
}
