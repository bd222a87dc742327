/**
 * `import` returns once the read models hold what it stored, as the API's writes do (issue 22:
 * on PostgreSQL a query right after an import saw 1 of 4 domains); `--no-wait` returns before.
 * With the service running (its projector applies the same events meanwhile) and without it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openRuntime } from "@dmarc-ledger/runtime";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReportXml } from "../support/report-xml.js";
import { type Backend, backends, cli, startTestService } from "../support/service-harness.js";

/** A report for `domain` alone, of a report id of its own. */
const reportFor = (domain: string) =>
  aggregateReportXml({
    reportId: `read-models-${domain}`,
    domain,
    organization: "google.com",
    begin: 1_700_000_000,
    end: 1_700_086_399,
    rows: [{ sourceIp: "192.0.2.10", count: 5 }],
  });

describe.each(backends)("import and the read models, on %s", (_name, makeBackend) => {
  let backend: Backend;
  let work: string;

  beforeAll(async () => {
    backend = await makeBackend();
    work = mkdtempSync(join(tmpdir(), "dl-import-wait-"));
  });
  afterAll(async () => {
    await backend?.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  /** The policy domains the by-domain read model holds, among `domains`. */
  const shown = async (domains: string[]) => {
    const runtime = await openRuntime(backend.env);
    try {
      const rows = await sql<{ domain: string }>`select distinct domain from agg_domain`.execute(runtime.db);
      return rows.rows
        .map((row) => row.domain)
        .filter((domain) => domains.includes(domain))
        .sort();
    } finally {
      await runtime.close();
    }
  };

  it("returns once the read models hold every report it stored, beside a running service", async () => {
    const domains = ["alpha-ledger.com", "bravo-ledger.com", "charlie-ledger.com", "delta-ledger.com"];
    const dir = join(work, "beside");
    const service = await startTestService(backend.env);
    try {
      mkdirIn(dir, domains);
      const imported = await cli(backend.env, "import", dir);
      expect(imported.code, imported.err).toBe(0);
      expect(imported.out).toContain("4 reports stored");
      // Right after: the service's projector may not have run yet; the import waited all the same.
      const rows = await sql<{ domain: string }>`select distinct domain from agg_domain`.execute(
        service.runtime.db,
      );
      expect(
        rows.rows
          .map((row) => row.domain)
          .filter((domain) => domains.includes(domain))
          .sort(),
      ).toEqual(domains);
    } finally {
      await service.stop();
    }
  });

  it("without a service, applies them itself; --no-wait leaves them to the next projector", async () => {
    const waited = ["echo-ledger.com", "foxtrot-ledger.com"];
    const dir = join(work, "alone");
    mkdirIn(dir, waited);
    const imported = await cli(backend.env, "import", dir);
    expect(imported.code, imported.err).toBe(0);
    expect(imported.out).not.toContain("Not waiting");
    expect(await shown(waited)).toEqual(waited);

    const later = ["golf-ledger.com", "hotel-ledger.com"];
    const laterDir = join(work, "no-wait");
    mkdirIn(laterDir, later);
    const hurried = await cli(backend.env, "import", "--no-wait", laterDir);
    expect(hurried.code, hurried.err).toBe(0);
    expect(hurried.out).toContain("2 reports stored");
    expect(hurried.out).toContain("Not waiting for the read models (--no-wait)");
    // No projector runs: the reports are stored, the read models do not show them yet.
    expect(await shown(later)).toEqual([]);
  });
});

/** A directory holding one report file for each domain. */
function mkdirIn(dir: string, domains: string[]): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const domain of domains) writeFileSync(join(dir, `${domain}.xml`), reportFor(domain));
}
