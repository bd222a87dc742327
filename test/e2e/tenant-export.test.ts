import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateCorpus, failureCorpus } from "../support/corpus.js";
import {
  type Backend,
  cli,
  pgliteBackend,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

const aggregateFiles = [
  "!example.com!1538204542!1538463818.xml",
  "addisonfoods.com!example.com!1536105600!1536191999.xml",
  "example.net!example.com!1529366400!1529452799.xml",
  "ikea.com!example.de!1538690400!1538776800.xml",
  "protection.outlook.com!example.com!1711756800!1711843200.xml",
  "veeam.com!example.com!1530133200!1530219600.xml",
].map((name) => `${aggregateCorpus}${name}`);

const failureFiles = [
  "DMARC Failure Report for domain.de (mail-from=sharepoint@domain.de, ip=10.10.10.10).eml",
  "dmarc_ruf_report_linkedin.eml",
  "exim_plain_text_only_no_arf_part.eml",
].map((name) => `${failureCorpus}${name}`);

const period = "start=0&end=2000000000";
/** Every answer a tenant's key gets about its data; `domains` without the time each was added here. */
const paths = [
  `aggregate_by_domain?${period}`,
  `aggregate_by_domain_group?${period}`,
  `aggregate_by_source?${period}`,
  `aggregate_by_unaligned_source?${period}`,
  `aggregate_by_organization?${period}`,
  `aggregate_by_date?${period}&bucket=month`,
  `forensic?${period}`,
  "personal_data_policy",
  "domains",
];

async function answers(handle: ServiceHandle, key: string): Promise<Record<string, unknown>> {
  const all: Record<string, unknown> = {};
  for (const path of paths) {
    const response = await handle.get(path, key);
    expect(response.status, `${path}: ${response.body}`).toBe(200);
    const json = response.json as { records?: Record<string, unknown>[] };
    if (path === "domains") for (const record of json.records ?? []) delete record.Added;
    all[path] = json;
  }
  return all;
}

describe("tenant export and import: a tenant moved from a PostgreSQL deployment to an empty embedded one", () => {
  let source: Backend;
  let target: Backend;
  let sourceService: ServiceHandle;
  let acme: { tenantId: string; apiKey: string };
  const tmp = mkdtempSync(join(tmpdir(), "dl-export-"));
  const file = join(tmp, "acme.ndjson");

  beforeAll(async () => {
    source = await postgresBackend();
    target = await pgliteBackend();
    acme = JSON.parse((await cli(source.env, "tenant", "create", "acme", "--json")).out);
    const other = JSON.parse((await cli(source.env, "tenant", "create", "other", "--json")).out);
    for (const domain of ["example.com", "domain.de"]) {
      expect((await cli(source.env, "domain", "add", "acme", domain)).code).toBe(0);
    }
    expect((await cli(source.env, "domain", "add", "other", "example.de")).code).toBe(0);
    const imported = await cli(source.env, "import", ...aggregateFiles, ...failureFiles);
    expect(imported.code, imported.err).toBe(0);
    sourceService = await startTestService(source.env);
    expect(
      (await sourceService.put("domain_group", acme.apiKey, { domain: "example.com", group: "Brands" }))
        .status,
    ).toBe(200);
    expect(
      (
        await sourceService.put("update_personal_data_policy", acme.apiKey, {
          redaction: "off",
          failure_report_days: "120",
        })
      ).status,
    ).toBe(200);
    expect(other.apiKey).toBeTruthy();
  });

  afterAll(async () => {
    await sourceService?.stop();
    await source?.cleanup();
    await target?.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("writes every fact of the tenant, and only its, as NDJSON readable by its owner only", async () => {
    const exported = await cli(source.env, "tenant", "export", "acme", "--output", file);
    expect(exported.code, exported.err).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ format: "dmarc-ledger-tenant", version: 1, tenantId: acme.tenantId });
    const streams = new Set(lines.slice(1).map((line) => line.stream as string));
    expect(streams.has(`tenant-${acme.tenantId}`)).toBe(true);
    expect(streams.has("domain-example.com")).toBe(true);
    // The other tenant's domain and reports stay home.
    expect([...streams].some((stream) => stream.includes("example.de"))).toBe(false);
    expect(lines.some((line) => line.type === "TenantCreated" && line.data.tenantId !== acme.tenantId)).toBe(
      false,
    );
    // Failure reports go with their fields opened: the export is the tenant's copy of its data.
    const failure = lines.find((line) => line.type === "ForensicReportReceived");
    expect(failure.data.personal.clear.subject).toBeTruthy();
    // To stdout when no file is named.
    const toStdout = await cli(source.env, "tenant", "export", acme.tenantId);
    expect(toStdout.out.split("\n").length).toBe(lines.length);
  });

  it("imported into an empty deployment, gives the same API answers to the same key", async () => {
    const imported = await cli(target.env, "tenant", "import", file);
    expect(imported.code, imported.err).toBe(0);
    expect(imported.out).toContain(`Imported tenant ${acme.tenantId}`);
    const before = await answers(sourceService, acme.apiKey);
    const targetService = await startTestService(target.env);
    try {
      expect(await answers(targetService, acme.apiKey)).toEqual(before);
      expect((before[`forensic?${period}`] as { total: string }).total).toBe("3");
    } finally {
      await targetService.stop();
    }
  });

  it("refuses a second import of the same tenant, naming what is here already", async () => {
    const again = await cli(target.env, "tenant", "import", file);
    expect(again.code).toBe(1);
    expect(again.err).toContain(`tenant-${acme.tenantId} is in this deployment already`);
  });
});
