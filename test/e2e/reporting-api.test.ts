import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTenant, issueApiKey } from "@dmarc-ledger/tenancy";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateCorpus, failureCorpus } from "../support/corpus.js";
import {
  byVolumeThenKey,
  countersOf,
  groupBy,
  readSimpleRows,
  type SimpleRow,
} from "../support/independent-aggregate.js";
import { independentNetworks } from "../support/independent-networks.js";
import { expectedSourceRecords, unnamedSource } from "../support/independent-sources.js";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { waitForEverySourceNamed } from "../support/sources-named.js";

// Well-formed aggregate reports of the corpus (the broken ones are the parser's tests' business).
const aggregateFiles = [
  "!example.com!1538204542!1538463818.xml",
  "!large-example.com!1711897200!1711983600.xml",
  "addisonfoods.com!example.com!1536105600!1536191999.xml",
  "empty_reason.xml",
  "example.net!example.com!1529366400!1529452799.xml",
  "ikea.com!example.de!1538690400!1538776800.xml",
  "old_draft_from_wiki.xml",
  "protection.outlook.com!example.com!1711756800!1711843200.xml",
  "rfc9990-example.net!example.com!1700000000!1700086399.xml",
  "rfc9990-sample.xml",
  "usssa.com!example.com!1538784000!1538870399.xml",
  "veeam.com!example.com!1530133200!1530219600.xml",
].map((name) => `${aggregateCorpus}${name}`);

const failureFiles = [
  "DMARC Failure Report for domain.de (mail-from=sharepoint@domain.de, ip=10.10.10.10).eml",
  "[Netease DMARC Failure Report] Rent Reminder.eml",
  "dmarc_ruf_report_linkedin.eml",
  "dmarc_ruf_report_linkedin.crlf.eml",
  "exim_plain_text_only_no_arf_part.eml",
].map((name) => `${failureCorpus}${name}`);

// No corpus report carries ARC, so one is generated: a forwarded message that failed DMARC with
// an ARC pass, a second from the same source without one, on a subdomain of example.com.
const arcReport = `<?xml version="1.0"?>
<feedback><report_metadata><org_name>mail.google.com</org_name><email>noreply@google.com</email>
<report_id>arc-test-1</report_id><date_range><begin>1700100000</begin><end>1700186399</end></date_range></report_metadata>
<policy_published><domain>news.example.com</domain><p>reject</p></policy_published>
<record><row><source_ip>203.0.113.9</source_ip><count>7</count><policy_evaluated><disposition>reject</disposition>
<dkim>fail</dkim><spf>fail</spf><reason><type>local_policy</type><comment>arc=pass as.1.google.com=pass</comment></reason></policy_evaluated></row>
<identifiers><header_from>news.example.com</header_from></identifiers>
<auth_results><dkim><domain>lists.example.org</domain><result>pass</result></dkim><spf><domain>lists.example.org</domain><result>pass</result></spf></auth_results></record>
<record><row><source_ip>203.0.113.9</source_ip><count>3</count><policy_evaluated><disposition>quarantine</disposition>
<dkim>fail</dkim><spf>fail</spf></policy_evaluated></row>
<identifiers><header_from>news.example.com</header_from></identifiers>
<auth_results><spf><domain>bounce.example.net</domain><result>softfail</result></spf></auth_results></record>
</feedback>`;

const period = "start=0&end=2000000000";
/** Every page of a list endpoint, until the empty page that marks the end. */
async function allPages(handle: ServiceHandle, endpoint: string, key: string, perPage: number) {
  const records: unknown[] = [];
  const totals = new Set<unknown>();
  for (let page = 1; page < 100; page++) {
    const response = await handle.get(`${endpoint}?${period}&page=${page}&per_page=${perPage}`, key);
    expect(response.status).toBe(200);
    const body = response.json as { total: unknown; records: unknown[] };
    totals.add(body.total);
    if (body.records.length === 0) return { records, totals, pages: page - 1 };
    records.push(...body.records);
  }
  throw new Error("pagination did not end");
}

describe("the reporting API over HTTP", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let acme: string;
  let other: string;
  let acmeTenant: string;
  const rowsByFile = new Map<string, SimpleRow[]>();
  let acmeRows: SimpleRow[];
  const tmp = mkdtempSync(join(tmpdir(), "dl-api-"));

  beforeAll(async () => {
    backend = await postgresBackend();
    const arcFile = join(tmp, "arc-report.xml");
    writeFileSync(arcFile, arcReport);
    for (const file of [...aggregateFiles, arcFile]) rowsByFile.set(file, readSimpleRows(file));
    const created = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out);
    acme = created.apiKey;
    acmeTenant = created.tenantId;
    other = JSON.parse((await cli(backend.env, "tenant", "create", "other", "--json")).out).apiKey;
    const imported = await cli(backend.env, "import", ...aggregateFiles, arcFile, ...failureFiles);
    expect(imported.code, imported.err).toBe(0);
    // The replay test polls in a tight loop while a replay runs: on a loaded machine that is
    // more than the default bucket, and 429s are api-limits-and-failures.test.ts's subject.
    handle = await startTestService({
      ...backend.env,
      RATE_LIMIT_PER_SECOND: "100000",
      RATE_LIMIT_BURST: "100000",
    });
    for (const domain of ["example.com", "domain.de"]) {
      expect((await handle.put("add-domain", acme, { domain })).status).toBe(200);
    }
    expect((await handle.put("add_domain", other, { domain: "example.de" })).status).toBe(200);
    expect((await handle.put("domain_group", acme, { domain: "example.com", group: "Brands" })).status).toBe(
      200,
    );
    await waitForEverySourceNamed(handle.runtime);
    acmeRows = [...rowsByFile.values()]
      .flat()
      .filter((row) => row.domain === "example.com" || row.domain.endsWith(".example.com"));
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("aggregate_by_domain: one record per policy domain, subdomains on their own", async () => {
    const response = await handle.get(`aggregate_by_domain?${period}`, acme);
    const expected = [...groupBy(acmeRows, (row) => row.domain)]
      .map(([Domain, rows]) => ({ Domain, ...countersOf(rows) }))
      .sort(byVolumeThenKey((record) => [record.Domain]));
    expect(response.json).toEqual({ status: "SUCCESS", total: expected.length, records: expected });
    // The ARC report's forwarded message: failed DMARC, passed ARC.
    const news = expected.find((record) => record.Domain === "news.example.com")!;
    expect(news.DMARCUnalignedARCPass).toBe("7");
  });

  it("aggregate_by_domain_group: the group each domain is in now, subdomains with it", async () => {
    const response = await handle.get(`aggregate_by_domain_group?${period}`, acme);
    expect(response.json).toEqual({
      status: "SUCCESS",
      total: 1,
      records: [{ DomainGroup: "Brands", ...countersOf(acmeRows) }],
    });
    // Regrouping applies to history; removing the group leaves the domain out.
    await handle.put("domain_group", acme, { domain: "example.com", group: "Renamed" });
    expect((await handle.get(`aggregate_by_domain_group?${period}`, acme)).json).toMatchObject({
      records: [{ DomainGroup: "Renamed" }],
    });
    await handle.put("domain_group", acme, { domain: "example.com", group: "" });
    expect((await handle.get(`aggregate_by_domain_group?${period}`, acme)).json).toEqual({
      status: "SUCCESS",
      total: 0,
      records: [],
    });
    await handle.put("domain_group", acme, { domain: "example.com", group: "Brands" });
  });

  it("aggregate_by_organization: reporters reduced to their registrable domain", async () => {
    const response = await handle.get(`aggregate_by_organization?${period}`, acme);
    const expected = [...groupBy(acmeRows, (row) => row.organization)]
      .map(([Organization, rows]) => ({ Organization, ...countersOf(rows) }))
      .sort(byVolumeThenKey((record) => [record.Organization]));
    expect(response.json).toEqual({ status: "SUCCESS", total: expected.length, records: expected });
    expect(expected.map((record) => record.Organization)).toContain("google.com");
  });

  it.each([
    ["aggregate_by_source", false],
    ["aggregate_by_unaligned_source", true],
  ] as const)("%s: every page, no duplicates, no gaps, every field", async (endpoint, unaligned) => {
    const networks = await independentNetworks(new Set(acmeRows.map((row) => row.sourceIp)));
    const expected = expectedSourceRecords(acmeRows, unaligned).map((record) => ({
      ...record,
      ...networks.get(record.SourceIp)!,
    }));
    expect(expected.length).toBeGreaterThan(2000);
    const { records, totals, pages } = await allPages(handle, endpoint, acme, 1000);
    expect(pages).toBe(Math.ceil(expected.length / 1000));
    expect([...totals]).toEqual([expected.length]);
    // Service and ServiceType follow the naming rule (reverse DNS, the reports' authentication
    // domains, the AS), tested path by path in packages/source-names and over HTTP in
    // senders-api.test.ts; here every other field is compared.
    const withoutService = ({ Service, ServiceType, ...rest }: Record<string, unknown>) => rest;
    expect((records as Record<string, unknown>[]).map(withoutService)).toEqual(expected.map(withoutService));
    const keys = new Set(records.map((record) => JSON.stringify(record)));
    expect(keys.size).toBe(records.length);
  });

  it("aggregate_by_source: the ARC source picks reject (7) and ARC pass", async () => {
    const response = await handle.get(`aggregate_by_source?${period}&per_page=1000`, acme);
    const arcSource = (response.json as { records: Record<string, unknown>[] }).records.find(
      (record) => record.SourceIp === "203.0.113.9",
    );
    expect(arcSource).toEqual({
      SourceDomain: "",
      DomainPublished: "news.example.com",
      Organization: "google.com",
      SourceIp: "203.0.113.9",
      Disposition: "reject",
      ARC: "pass",
      DispositionCount: "7",
      LastDate: "2023-11-16",
      SPFDomain: "lists.example.org",
      DKIMDomain: "lists.example.org",
      Volume: "10",
      DMARC: "0",
      DMARCUnaligned: "10",
      DMARCUnalignedARCPass: "7",
      DKIMAligned: "0",
      DKIM: "7",
      DKIMFailed: "3",
      SPFAligned: "0",
      SPF: "7",
      SPFFailed: "3",
      ...unnamedSource,
    });
  });

  it("forensic: redacted by default, addresses' local parts masked, subject removed", async () => {
    const body = (await handle.get(`forensic?${period}`, acme)).json as {
      total: string;
      records: Record<string, string>[];
    };
    expect(body.total).toBe("3");
    expect(body.records.map((record) => record.Subject)).toEqual(["(removed)", "(removed)", "(removed)"]);
    for (const record of body.records) {
      expect(record.Headers.toLowerCase()).not.toMatch(/^subject:/m);
      expect(record.Headers).not.toMatch(/[A-Za-z0-9._%+-]*[A-Za-z0-9]@[a-z0-9-]+\./i);
      expect(record.Headers).toContain("*****@");
    }
    expect(body.records[0]!.Headers).not.toContain("Payment from your account");
  });

  it("forensic: the tenant's failure reports, newest first; the CRLF copy is stored once", async () => {
    const off = await handle.put("update_personal_data_policy", acme, { redaction: "off" });
    expect(off).toMatchObject({ status: 200, json: { redaction: "off", failure_report_days: 90 } });
    const response = await handle.get(`forensic?${period}`, acme);
    await handle.put("update_personal_data_policy", acme, { redaction: "on" });
    const body = response.json as { total: string; records: Record<string, string>[] };
    // example.com: the Exim report (2025-04-07) and the LinkedIn report (its LF and CRLF copies are
    // one report); domain.de: one report. Netease's is for cardinal.com, not a domain of acme's.
    expect(body.total).toBe("3");
    expect(
      body.records.map((record) => [record.Domain, record.Received, record.Subject, record.Amount]),
    ).toEqual([
      ["example.com", "2025-04-07 21:16:09", "Payment from your account.", "1"],
      ["example.com", "2019-04-30 02:09:00", "Subject line, could be UTF8 encoded", "1"],
      ["domain.de", "2018-10-01 09:20:27", "Subject", "1"],
    ]);
    for (const record of body.records) {
      expect(Object.keys(record)).toEqual([
        "ForensicId",
        "Subject",
        "Domain",
        "Received",
        "Amount",
        "Headers",
      ]);
      expect(record.ForensicId).toMatch(/^\d+$/);
      expect(record.Headers).toMatch(/^[\s\S]*\n[\s\S]*$/);
      expect(record.Headers).not.toContain("\r");
    }
    expect(body.records[0]!.Headers.toLowerCase()).toContain("subject: payment from your account.");
  });

  it("every list endpoint: the spec's field types", async () => {
    for (const endpoint of [
      "aggregate_by_domain",
      "aggregate_by_domain_group",
      "aggregate_by_unaligned_source",
      "aggregate_by_source",
      "aggregate_by_organization",
      "forensic",
    ]) {
      const body = (await handle.get(`${endpoint}?${period}&per_page=50`, acme)).json as {
        status: string;
        total: unknown;
        records: Record<string, unknown>[];
      };
      expect(body.status).toBe("SUCCESS");
      expect(typeof body.total).toBe(endpoint === "forensic" ? "string" : "number");
      expect(body.records.length).toBeGreaterThan(0);
      for (const record of body.records) {
        for (const [field, value] of Object.entries(record)) {
          const nullable =
            field === "ARC" ||
            (field === "DMARCUnalignedARCPass" && endpoint === "aggregate_by_unaligned_source");
          if (value === null) expect(nullable, `${endpoint}.${field}`).toBe(true);
          else expect(typeof value, `${endpoint}.${field}`).toBe("string");
        }
        if ("LastDate" in record) expect(record.LastDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      }
    }
  });

  it("never shows a tenant another tenant's data, on any endpoint", async () => {
    const otherDomain = await handle.get(`aggregate_by_domain?${period}`, other);
    const ikea = readSimpleRows(aggregateFiles[5]!);
    expect(otherDomain.json).toEqual({
      status: "SUCCESS",
      total: 1,
      records: [{ Domain: "example.de", ...countersOf(ikea) }],
    });
    for (const endpoint of [
      "aggregate_by_source",
      "aggregate_by_unaligned_source",
      "aggregate_by_organization",
    ]) {
      const body = (await handle.get(`${endpoint}?${period}`, other)).json as {
        records: Record<string, string>[];
      };
      for (const record of body.records) {
        if ("DomainPublished" in record) expect(record.DomainPublished).toBe("example.de");
      }
      expect(body.records.length).toBeGreaterThan(0);
    }
    expect((await handle.get(`forensic?${period}`, other)).json).toEqual({
      status: "SUCCESS",
      total: "0",
      records: [],
    });
    expect((await handle.get(`aggregate_by_domain_group?${period}`, other)).json).toMatchObject({ total: 0 });
    expect((await handle.get("history?domain=example.com", other)).status).toBe(404);
    expect((await handle.get("safe_spf?domain=example.com", other)).status).toBe(404);
    expect(
      (await handle.put("update_safe_spf", other, { domain: "example.com", original: "v=spf1 -all" })).status,
    ).toBe(404);
    expect((await handle.put("domain_group", other, { domain: "example.com", group: "Mine" })).status).toBe(
      404,
    );
    expect((await handle.put("add-domain", other, { domain: "example.com" })).status).toBe(409);
    const domains = (await handle.get("domains", other)).json as { records: { Domain: string }[] };
    expect(domains.records.map((record) => record.Domain)).toEqual(["example.de"]);
  });

  it("says what is allowed when it refuses a period or a page", async () => {
    const message = async (path: string) => {
      const response = await handle.get(path, acme);
      expect(response.status).toBe(400);
      return (response.json as { message: string }).message;
    };
    const seconds = "must be a Unix time in seconds, a whole number from 0 to 9007199254740991";
    expect(await message("aggregate_by_domain?start=-5")).toBe(`Parameter "start": ${seconds}, not "-5".`);
    expect(await message("aggregate_by_domain?start=1.5")).toBe(`Parameter "start": ${seconds}, not "1.5".`);
    expect(await message("aggregate_by_domain?end=tomorrow")).toBe(
      `Parameter "end": ${seconds}, not "tomorrow".`,
    );
    expect(await message("aggregate_by_domain?page=0")).toBe(
      'Parameter "page": must be a whole number from 1 to 9007199254740991, not "0".',
    );
    expect(await message("aggregate_by_domain?per_page=1001")).toBe(
      'Parameter "per_page": must be a whole number from 1 to 1000, not "1001".',
    );
    expect(await message("domains?page=-1")).toBe(
      'Parameter "page": must be a whole number from 1 to 9007199254740991, not "-1".',
    );
  });

  it("answers every error of the contract with its status and JSON", async () => {
    const expectError = async (response: { status: number; json: unknown }, status: number, code: string) => {
      expect(response.status).toBe(status);
      expect(response.json).toMatchObject({ status: "ERROR", code });
      expect(typeof (response.json as { message: unknown }).message).toBe("string");
    };
    await expectError(await handle.get("aggregate_by_source?page=0", acme), 400, "invalid_parameter");
    await expectError(await handle.get("aggregate_by_source?start=-5", acme), 400, "invalid_parameter");
    await expectError(await handle.get("aggregate_by_source?per_page=1001", acme), 400, "invalid_parameter");
    await expectError(await handle.get("aggregate_by_source?start=1.5", acme), 400, "invalid_parameter");
    await expectError(await handle.get("aggregate_by_source?start=9&end=8", acme), 400, "invalid_parameter");
    await expectError(await handle.get("aggregate_by_source?bogus=1", acme), 400, "invalid_parameter");
    await expectError(await handle.get("aggregate_by_source", "nonsense"), 401, "unauthorized");
    await expectError(
      await handle.get("aggregate_by_source", acme.replace("dlk_global_", "dlk_eu_")),
      421,
      "wrong_region",
    );
    const readOnly = await issueApiKey(
      handle.runtime.store,
      { tenantId: acmeTenant, scopes: ["read"] },
      { causedBy: "test" },
    );
    let forbidden = await handle.put("add-domain", readOnly.apiKey, { domain: "example.org" });
    for (let attempt = 0; forbidden.status === 401 && attempt < 100; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      forbidden = await handle.put("add-domain", readOnly.apiKey, { domain: "example.org" });
    }
    await expectError(forbidden, 403, "missing_scope");
    await expectError(await handle.get("no_such_endpoint", acme), 404, "not_found");
    await expectError(await handle.get("history?domain=unknown-domain.com", acme), 404, "unknown_domain");
    await expectError(await handle.put("aggregate_by_source", acme, {}), 405, "method_not_allowed");
    await expectError(await handle.put("add-domain", acme, { domain: "co.uk" }), 400, "invalid_domain");
    await expectError(await handle.put("add-domain", other, { domain: "example.com" }), 409, "domain_taken");
    const huge = await fetch(new URL("add-domain", handle.service.apiRoot), {
      method: "PUT",
      headers: { Authorization: `Bearer ${acme}`, "Content-Type": "application/x-www-form-urlencoded" },
      body: `domain=${"a".repeat(200_000)}`,
    });
    const hugeAnswer = { status: huge.status, json: await huge.json() };
    await expectError(hugeAnswer, 413, "body_too_large");
    // Without a Content-Length (chunked) the body parser finds it past the limit: the same answer.
    const hugeChunked = await fetch(new URL("add-domain", handle.service.apiRoot), {
      method: "PUT",
      headers: { Authorization: `Bearer ${acme}`, "Content-Type": "application/x-www-form-urlencoded" },
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(`domain=${"a".repeat(200_000)}`));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    const tooLarge = {
      status: 413,
      json: {
        status: "ERROR",
        code: "body_too_large",
        message: "Bodies are limited to 65536 bytes (MAX_BODY_BYTES).",
      },
    };
    expect(hugeAnswer).toEqual(tooLarge);
    expect({ status: hugeChunked.status, json: await hugeChunked.json() }).toEqual(tooLarge);
    const xml = await fetch(new URL("add-domain", handle.service.apiRoot), {
      method: "PUT",
      headers: { Authorization: `Bearer ${acme}`, "Content-Type": "text/xml" },
      body: "<domain>x</domain>",
    });
    await expectError({ status: xml.status, json: await xml.json() }, 415, "unsupported_media_type");
    const json = await fetch(new URL("add_domain", handle.service.apiRoot), {
      method: "PUT",
      headers: { Authorization: `Bearer ${acme}`, "Content-Type": "application/json" },
      body: JSON.stringify({ domain: "example.com" }),
    });
    expect(await json.json()).toEqual({ status: "SUCCESS", added: false });
  });

  it("reads its own writes and records who wrote them", async () => {
    expect((await handle.put("add-domain", acme, { domain: "written.example.org" })).status).toBe(200);
    const domains = (await handle.get("domains", acme)).json as { records: { Domain: string }[] };
    expect(domains.records.map((record) => record.Domain)).toContain("written.example.org");
    const history = (await handle.get("history?domain=example.com", acme)).json as {
      records: { Event: string; CausedBy: string; Data: { group?: string | null } }[];
    };
    expect(history.records.map((record) => record.Event)).toEqual([
      "DomainAdded",
      "DomainGroupSet",
      "DomainGroupSet",
      "DomainGroupSet",
      "DomainGroupSet",
    ]);
    expect(history.records.map((record) => record.Data.group ?? null)).toEqual([
      null,
      "Brands",
      "Renamed",
      null,
      "Brands",
    ]);
    expect(history.records.every((record) => /^key:[0-9a-f]{16}$/.test(record.CausedBy))).toBe(true);
  });

  it("serves an OpenAPI 3.1 document that every real response satisfies", async () => {
    const doc = (await handle.get("openapi.json", acme)).json as {
      openapi: string;
      paths: Record<
        string,
        Record<
          string,
          { responses: Record<string, { content?: Record<string, { schema?: { $ref: string } }> }> }
        >
      >;
      components: { schemas: Record<string, object> };
    };
    expect(doc.openapi).toBe("3.1.0");
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    for (const [name, schema] of Object.entries(doc.components.schemas))
      ajv.addSchema(schema, `#/components/schemas/${name}`);
    const validate = (path: string, method: string, status: string, body: unknown) => {
      const ref = doc.paths[path]?.[method]?.responses[status]?.content?.["application/json"]?.schema?.$ref;
      expect(ref, `${method} ${path} ${status} is documented`).toBeTruthy();
      const check = ajv.getSchema(ref!)!;
      expect(check(body), `${method} ${path} ${status}: ${JSON.stringify(check.errors)}`).toBe(true);
    };
    const root = (await handle.get("", acme)).json as { links: Record<string, string> };
    validate("/", "get", "200", root);
    for (const name of Object.keys(root.links)) {
      if (name !== "openapi") expect(Object.keys(doc.paths)).toContain(`/${name}`);
    }
    const forensic = (await handle.get(`forensic?${period}`, acme)).json as {
      records: { ForensicId: string }[];
    };
    const forensicId = forensic.records[0]!.ForensicId;
    for (const path of Object.keys(doc.paths)) {
      const get = doc.paths[path]!.get as { "x-scope"?: string } | undefined;
      // domain_status reads live DNS: domain-status-api.test.ts validates it with fixture zones.
      // The admin's endpoints answer signed-in admins only: dashboard-api.test.ts validates them.
      // A delivery log needs a webhook: alerts-api.test.ts validates it.
      if (
        !get ||
        get["x-scope"] === "admin" ||
        [
          "/",
          "/openapi.json",
          "/healthz",
          "/readyz",
          "/metrics",
          "/domain_status",
          "/webhook_deliveries",
        ].includes(path)
      )
        continue;
      const query =
        path === "/history" || path === "/safe_spf"
          ? "?domain=example.com"
          : path === "/failure_report"
            ? `?forensic_id=${forensicId}`
            : ["/domains", "/alerts", "/alert_rules", "/webhooks"].includes(path)
              ? "?per_page=5"
              : path === "/aggregate_by_date" || path === "/tls_by_date"
                ? `?${period}&bucket=month&per_page=5` // by day, the period is refused (over 1,000 days)
                : path === "/policy_impact"
                  ? `?${period}&per_page=5&policy=reject`
                  : path === "/events"
                    ? "?limit=5"
                    : `?${period}&per_page=5`;
      const response = await handle.get(`${path.slice(1)}${query}`, acme);
      expect(response.status, path).toBe(200);
      validate(path, "get", "200", response.json);
    }
    const put = await handle.put("add-domain", acme, { domain: "example.com" });
    validate("/add-domain", "put", "200", put.json);
    const error = await handle.get("aggregate_by_domain?page=0", acme);
    validate("/aggregate_by_domain", "get", "400", error.json);
    const noRecord = await handle.get("aggregate_by_domain", "x");
    validate("/aggregate_by_domain", "get", "401", noRecord.json);
  });

  it("replays into byte-identical answers on every endpoint", async () => {
    const paths = [
      `aggregate_by_domain?${period}`,
      `aggregate_by_domain_group?${period}`,
      `aggregate_by_unaligned_source?${period}&per_page=1000&page=2`,
      `aggregate_by_source?${period}&per_page=1000`,
      `aggregate_by_organization?${period}`,
      `forensic?${period}`,
      "domains",
      "history?domain=example.com",
    ];
    const before = await Promise.all(paths.map(async (path) => (await handle.get(path, acme)).body));
    const indexNames = async () =>
      (
        await sql<{
          name: string;
        }>`select indexname as name from pg_indexes where schemaname = 'public' order by 1`.execute(
          handle.runtime.db,
        )
      ).rows.map((row) => row.name);
    const indexesBefore = await indexNames();

    // The replay runs beside the running service (another pool, as another process would);
    // meanwhile every answer must still be the full, old one, never a half-built table.
    let replaying = true;
    const answersDuringReplay: string[] = [];
    const poll = (async () => {
      while (replaying) answersDuringReplay.push((await handle.get(paths[0]!, acme)).body);
    })();
    const replayed = await cli(backend.env, "replay");
    replaying = false;
    await poll;
    expect(replayed.code, replayed.err).toBe(0);
    expect(replayed.out).toMatch(/^Rebuilt tenants, domains, .* from \d+ events/);
    expect(answersDuringReplay.length).toBeGreaterThan(0);
    expect(new Set(answersDuringReplay)).toEqual(new Set([before[0]]));

    const after = await Promise.all(paths.map(async (path) => (await handle.get(path, acme)).body));
    expect(await indexNames()).toEqual(indexesBefore);
    expect(after).toEqual(before);
  });
});

describe("regions", () => {
  it("an EU deployment serves EU keys and sends global keys away with 421", async () => {
    const backend = await postgresBackend();
    const env = {
      ...backend.env,
      DMARC_LEDGER_REGION: "eu",
      OTHER_REGION_BASE_URL: "https://global.example/api/",
    };
    const eu = JSON.parse((await cli(env, "tenant", "create", "eu-tenant", "--region", "eu", "--json")).out)
      .apiKey as string;
    expect(eu).toMatch(/^dlk_eu_/);
    const handle = await startTestService(env);
    try {
      expect((await handle.get("", eu)).json).toMatchObject({ status: "SUCCESS", region: "eu" });
      const global = await createTenant(
        handle.runtime.store,
        { name: "g", region: "global" },
        { causedBy: "test" },
      );
      const misdirected = await handle.get("aggregate_by_domain", global.apiKey);
      expect(misdirected.status).toBe(421);
      expect((misdirected.json as { message: string }).message).toContain("https://global.example/api/");
    } finally {
      await handle.stop();
      await backend.cleanup();
    }
  });
});
