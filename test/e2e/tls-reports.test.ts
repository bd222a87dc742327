/**
 * SMTP TLS reports (RFC 8460) end to end: the report files of packages/tls-reports (RFC 8460's
 * example and the variations real reporters send) brought as JSON by import, as .json.gz and as
 * a mail by upload, and as a mail by SMTP, each counted once; GET tls_by_domain, tls_failures and
 * tls_by_date against an independent computation from the same files (test/support/
 * independent-tls.ts), for two tenants; a replay giving the same bytes; hostile JSON refused and
 * kept with the reason. On PGlite and on PostgreSQL.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { sha256Hex } from "@dmarc-ledger/events";
import nodemailer, { type Transporter } from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixture, fixtureNames } from "../../packages/tls-reports/test/fixtures.js";
import {
  expectedTlsByDate,
  expectedTlsByDomain,
  expectedTlsFailures,
  tlsFactsOf,
} from "../support/independent-tls.js";
import {
  type Backend,
  backends,
  cli,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

const at = (date: string, time = "00:00:00") => Date.parse(`${date}T${time}Z`) / 1000;
/** Sent first by SMTP, then again by upload: the others are imported first. */
const bySmtp = "unknown-result-two-days.json";
const texts = new Map(fixtureNames.map((name) => [name, fixture(name).toString("utf8")]));
const facts = tlsFactsOf([...texts.values()]);
const domainOf = (name: string) =>
  JSON.parse(texts.get(name)!).policies[0].policy["policy-domain"].toLowerCase() as string;

/** A TLS report mail as RFC 8460 §5.3 has it: the report a base64 part of type tlsrpt+gzip or +json. */
function tlsMail(name: string, gzip: boolean): Buffer {
  const report = fixture(name);
  const body = (gzip ? gzipSync(report) : report).toString("base64").replace(/.{76}/g, "$&\r\n");
  const type = gzip ? "application/tlsrpt+gzip" : "application/tlsrpt+json";
  const file = `example.net!${domainOf(name)}!1459468800!1459555199!001.json${gzip ? ".gz" : ""}`;
  return Buffer.from(
    [
      "From: tlsrpt@mail.example.net",
      "To: tlsrpt@ledger.test",
      `Subject: Report Domain: ${domainOf(name)} Submitter: example.net Report-ID: <${name}>`,
      `TLS-Report-Domain: ${domainOf(name)}`,
      "TLS-Report-Submitter: example.net",
      "MIME-Version: 1.0",
      'Content-Type: multipart/report; report-type="tlsrpt"; boundary="part"',
      "",
      "--part",
      "Content-Type: text/plain; charset=us-ascii",
      "",
      "This is an aggregate TLS report.",
      "--part",
      `Content-Type: ${type}; name="${file}"`,
      "Content-Transfer-Encoding: base64",
      `Content-Disposition: attachment; filename="${file}"`,
      "",
      body,
      "--part--",
      "",
    ].join("\r\n"),
  );
}

describe.each(backends)("SMTP TLS reports by every channel, counted once, on %s", (_name, open) => {
  let backend: Backend;
  let handle: ServiceHandle;
  let work: string;
  let transport: Transporter;
  let acme: { tenantId: string; apiKey: string };
  let other: { tenantId: string; apiKey: string };
  let imported: { code: number; out: string; err: string };
  const acmeDomains = ["example.com"];
  const otherDomains = ["example.org"];

  const post = async (key: string, body: Uint8Array) => {
    const response = await fetch(new URL("reports", handle.service.apiRoot), {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/octet-stream" },
      body,
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const records = async (path: string, key: string) => {
    const response = await handle.get(path, key);
    expect(response.status, `${path}: ${response.body}`).toBe(200);
    return response.json as { total: number; records: Record<string, string>[] };
  };
  const archived = async (sha256: string) =>
    handle.runtime.db
      .withTables<{
        raw_input: {
          sha256: string;
          channel: string;
          status: string;
          code: string | null;
          reason: string | null;
        };
      }>()
      .selectFrom("raw_input")
      .select(["channel", "status", "code", "reason"])
      .where("sha256", "=", sha256)
      .executeTakeFirst();

  beforeAll(async () => {
    const opened = await open();
    backend = {
      ...opened,
      env: { ...opened.env, REPORTS_DOMAIN: "reports.test", SMTP_PORT: "0", SMTP_HOST: "127.0.0.1" },
    };
    work = mkdtempSync(join(tmpdir(), "dl-tls-"));
    acme = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out);
    other = JSON.parse((await cli(backend.env, "tenant", "create", "other", "--json")).out);
    for (const name of fixtureNames) if (name !== bySmtp) writeFileSync(join(work, name), fixture(name));
    imported = await cli(backend.env, "import", work);
    handle = await startTestService(backend.env);
    transport = nodemailer.createTransport({
      host: "127.0.0.1",
      port: handle.service.intake.smtp!.port,
      secure: false,
    });
    for (const domain of acmeDomains)
      expect((await handle.put("add-domain", acme.apiKey, { domain })).status).toBe(200);
    for (const domain of otherDomains)
      expect((await handle.put("add-domain", other.apiKey, { domain })).status).toBe(200);
  });
  afterAll(async () => {
    transport?.close();
    await handle?.stop();
    await backend?.cleanup();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("imports TLS reports as JSON files, and says what each held", () => {
    expect(imported.code, imported.err).toBe(0);
    expect(imported.out).toContain(
      `${join(work, "rfc8460-example.json")}: TLS report for example.com, 5629 sessions, 303 failed (stored)`,
    );
    expect(imported.out).toContain(
      `${join(work, "postfix-no-policy-domain.json")}: TLS report for example.org, 170 sessions, 20 failed (stored)`,
    );
    expect(imported.out).toContain(`${fixtureNames.length - 1} reports stored, 0 duplicates`);
  });

  it("stores a report that comes first by SMTP, as an application/tlsrpt+json part", async () => {
    const info = await transport.sendMail({
      from: "tlsrpt@mail.example.net",
      to: "rua@reports.test",
      subject: "Report Domain: example.com Submitter: example.net",
      headers: { "TLS-Report-Domain": "example.com", "TLS-Report-Submitter": "example.net" },
      text: "This is an aggregate TLS report.",
      attachments: [
        { filename: "report.json", content: fixture(bySmtp), contentType: "application/tlsrpt+json" },
      ],
    });
    expect(info.response).toMatch(/^250 /);
    const stored = await handle.runtime.db
      .withTables<{ raw_input: { channel: string; status: string; items: string } }>()
      .selectFrom("raw_input")
      .select(["status", "items"])
      .where("channel", "=", "smtp")
      .execute();
    expect(stored).toHaveLength(1);
    expect(stored[0]!.status).toBe("stored");
    expect(JSON.parse(stored[0]!.items)).toEqual([
      expect.objectContaining({ kind: "tls", domains: ["example.com"], status: "stored" }),
    ]);
  });

  it("counts every report once, whether JSON, .json.gz or a mail, uploaded, imported or mailed", async () => {
    for (const name of fixtureNames) {
      const forms: [string, Buffer][] = [
        ["JSON", fixture(name)],
        [".json.gz", gzipSync(fixture(name))],
        ["tlsrpt+gzip mail", tlsMail(name, true)],
        ["tlsrpt+json mail", tlsMail(name, false)],
      ];
      for (const [form, bytes] of forms) {
        const answer = await post(acme.apiKey, bytes);
        expect(answer.status, `${name} ${form}`).toBe(202);
        expect(answer.json, `${name} ${form}`).toMatchObject({
          outcome: "duplicate",
          sha256: sha256Hex(bytes),
          items: [{ kind: "tls", status: "duplicate", rows: null, messages: null, dropped: null }],
        });
        expect((await archived(sha256Hex(bytes)))?.status, `${name} ${form}`).toMatch(/^(stored|duplicate)$/);
      }
    }
    // By SMTP again, as a gzip'd part: acknowledged, and nothing new.
    const info = await transport.sendMail({
      from: "tlsrpt@mail.example.net",
      to: "rua@reports.test",
      text: "This is an aggregate TLS report.",
      attachments: [
        {
          filename: "report.json.gz",
          content: gzipSync(fixture(bySmtp)),
          contentType: "application/tlsrpt+gzip",
        },
      ],
    });
    expect(info.response).toMatch(/^250 /);
  });

  const period = `start=${at("2016-03-01")}&end=${at("2016-05-01")}&per_page=1000`;

  it("answers tls_by_domain, tls_failures and tls_by_date as computed from the files, per tenant", async () => {
    const start = at("2016-03-01");
    const end = at("2016-05-01");
    for (const [tenant, domains] of [
      [acme, acmeDomains],
      [other, otherDomains],
    ] as const) {
      const byDomain = expectedTlsByDomain(facts, domains, start, end);
      await expect
        .poll(async () => (await records(`tls_by_domain?${period}`, tenant.apiKey)).records)
        .toEqual(byDomain);
      expect(byDomain.length).toBeGreaterThan(0);
      const failures = await records(`tls_failures?${period}`, tenant.apiKey);
      expect(failures.records).toEqual(expectedTlsFailures(facts, domains, start, end));
      expect(failures.total).toBe(failures.records.length);
      const series = await records(`tls_by_date?${period}`, tenant.apiKey);
      expect(series.records).toEqual(expectedTlsByDate(facts, domains, start, end));
      expect(series.total).toBe(62);
    }
    const acmeFailures = (await records(`tls_failures?${period}`, acme.apiKey)).records;
    // Microsoft's details name no sending MTA: "" in the record.
    expect(acmeFailures).toContainEqual(
      expect.objectContaining({
        Organization: "Microsoft Corporation",
        SendingMtaIp: "",
        ResultType: "sts-policy-invalid",
      }),
    );
    expect(acmeFailures).toContainEqual(expect.objectContaining({ ResultType: "certificate-revoked" }));
  });

  it("spreads a report of 48 hours over the days it covers, and pages and filters as the others", async () => {
    const start = at("2016-04-05");
    const end = at("2016-04-07", "23:59:59");
    const days = await records(`tls_by_date?start=${start}&end=${end}`, acme.apiKey);
    expect(days.records).toEqual(expectedTlsByDate(facts, acmeDomains, start, end));
    // 1,012 sessions from 12:00 on the 5th to 12:00 on the 7th: 253, 506, 253.
    expect(days.records.map((record) => record.Sessions)).toEqual(["253", "506", "253"]);
    const oneDay = `start=${at("2016-04-06")}&end=${at("2016-04-06", "23:59:59")}`;
    expect((await records(`tls_by_domain?${oneDay}`, acme.apiKey)).records).toEqual(
      expectedTlsByDomain(facts, acmeDomains, at("2016-04-06"), at("2016-04-06", "23:59:59")),
    );
    const all = expectedTlsFailures(facts, acmeDomains, at("2016-03-01"), at("2016-05-01"));
    const second = await records(
      `tls_failures?${period.replace("per_page=1000", "per_page=3&page=2")}`,
      acme.apiKey,
    );
    expect(second).toEqual({ status: "SUCCESS", total: all.length, records: all.slice(3, 6) });
    const filtered = await records(`tls_by_domain?${period}&domain=example.com`, acme.apiKey);
    expect(filtered.records).toEqual(
      expectedTlsByDomain(facts, acmeDomains, at("2016-03-01"), at("2016-05-01")),
    );
    expect((await handle.get(`tls_by_domain?${period}&domain=example.org`, acme.apiKey)).status).toBe(404);
    expect((await handle.get(`tls_by_date?${period}&bucket=year`, acme.apiKey)).status).toBe(400);
  });

  it("prints the same records as a table with `tls`, and as JSON", async () => {
    const start = at("2016-03-01");
    const end = at("2016-05-01");
    const json = await cli(
      backend.env,
      "tls",
      "acme",
      "--start",
      String(start),
      "--end",
      String(end),
      "--json",
      "--limit",
      "1000",
    );
    expect(json.code, json.err).toBe(0);
    expect(JSON.parse(json.out)).toEqual({
      domains: expectedTlsByDomain(facts, acmeDomains, start, end),
      failures: expectedTlsFailures(facts, acmeDomains, start, end),
    });
    const shown = await cli(
      backend.env,
      "tls",
      "acme",
      "--start",
      "2016-03-01",
      "--end",
      "2016-05-01",
      "--limit",
      "2",
    );
    expect(shown.code, shown.err).toBe(0);
    const lines = shown.out.split("\n");
    expect(lines[0]).toMatch(/^DOMAIN\s+POLICY\s+REPORTS\s+SESSIONS\s+SUCCESSFUL\s+FAILED\s+FAILED %$/);
    const sts = expectedTlsByDomain(facts, acmeDomains, start, end)[0]!;
    const share = `${((Number(sts.Failed) / Number(sts.Sessions)) * 100).toFixed(1)}%`;
    expect(lines[2]!.split(/\s+/)).toEqual([
      sts.Domain,
      sts.PolicyType,
      sts.Reports,
      sts.Sessions,
      sts.Successful,
      sts.Failed,
      share,
    ]);
    const failures = expectedTlsFailures(facts, acmeDomains, start, end);
    expect(shown.out).toContain(`(2 of ${failures.length} failure rows; --limit shows more)`);
    const refused = await cli(backend.env, "tls", "acme", "--domain", "example.org");
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain("not one of the tenant's domains");
  });

  it("exports a tenant's TLS reports with it, and none of another tenant's", async () => {
    const exported = await cli(backend.env, "tenant", "export", "other");
    expect(exported.code, exported.err).toBe(0);
    const tlsLines = exported.out
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type?: string; data?: { policies: { policyDomain: string }[] } })
      .filter((line) => line.type === "TlsReportReceived");
    const others = fixtureNames.filter((name) =>
      JSON.parse(texts.get(name)!).policies.some((entry: { policy: Record<string, string> }) =>
        otherDomains.includes((entry.policy["policy-domain"] ?? "").toLowerCase()),
      ),
    );
    expect(tlsLines).toHaveLength(others.length);
    for (const line of tlsLines)
      expect(line.data!.policies.some((policy) => otherDomains.includes(policy.policyDomain))).toBe(true);
  });

  it("refuses hostile JSON and keeps it with the reason", async () => {
    const example = () => JSON.parse(texts.get("rfc8460-example.json")!);
    const huge = example();
    huge.policies[0]["failure-details"] = new Array(10_001).fill(huge.policies[0]["failure-details"][0]);
    const wrongType = example();
    wrongType.policies[0].summary["total-successful-session-count"] = "5326";
    const hostile: [string, Buffer, string][] = [
      [
        "gzip bomb",
        gzipSync(Buffer.concat([Buffer.from('{"a":"'), Buffer.alloc(64 * 1024 * 1024, 0x61)])),
        "compression_ratio_exceeded",
      ],
      ["deep nesting", Buffer.from(`{"a":${"[".repeat(200_000)}`), "nesting_too_deep"],
      ["huge arrays", Buffer.from(JSON.stringify(huge)), "too_many_entries"],
      ["wrong types", Buffer.from(JSON.stringify(wrongType)), "invalid_tls_report"],
      ["no JSON", Buffer.from('{"organization-name": "Company-X", '), "malformed_json"],
    ];
    for (const [what, bytes, code] of hostile) {
      const answer = await post(acme.apiKey, bytes);
      expect(answer.status, what).toBe(202);
      expect(answer.json, what).toMatchObject({ outcome: "rejected", items: [{ kind: "rejected", code }] });
      expect(await archived(sha256Hex(bytes)), what).toMatchObject({
        status: "rejected",
        code,
        reason: expect.any(String),
      });
    }
  });

  it("gives the same bytes after a replay of the event store", async () => {
    const paths = [`tls_by_domain?${period}`, `tls_failures?${period}`, `tls_by_date?${period}&bucket=week`];
    const before = await Promise.all(paths.map(async (path) => (await handle.get(path, acme.apiKey)).body));
    await handle.stop();
    const replayed = await cli(backend.env, "replay");
    expect(replayed.code, replayed.err).toBe(0);
    expect(replayed.out).toMatch(/\btls_facts\b/);
    handle = await startTestService(backend.env);
    const after = await Promise.all(paths.map(async (path) => (await handle.get(path, acme.apiKey)).body));
    expect(after).toEqual(before);
    expect(JSON.parse(after[0]!).records.length).toBeGreaterThan(0);
  });
});
