import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "@dmarc-ledger/events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { corpusDir, failureCorpus } from "../support/corpus.js";
import {
  type Backend,
  backends,
  cli,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

const niceXml = readFileSync(`${corpusDir}dmarc/parsedmarc/extract_report/nice-input.xml`);
const niceGz = readFileSync(`${corpusDir}dmarc/parsedmarc/extract_report/nice-input.xml.gz`);
const niceZip = readFileSync(`${corpusDir}dmarc/parsedmarc/extract_report/nice-input.xml.zip`);
/** nice-input.xml: 20 rows, 3,047 messages for example.com, 2024-06-13. */
const niceMessages = 3047;
const period = "start=0&end=2000000000";
const failure = (name: string) => readFileSync(join(failureCorpus, name));
const linkedin = "dmarc_ruf_report_linkedin.eml";
const exim = "exim_plain_text_only_no_arf_part.eml";
const domainDe = "DMARC Failure Report for domain.de (mail-from=sharepoint@domain.de, ip=10.10.10.10).eml";
const netease = "[Netease DMARC Failure Report] Rent Reminder.eml";

/** The same report a receiver would mail: a gzip attachment in a multipart message. */
function reportMail(attachment: Buffer): Buffer {
  const base64 = attachment.toString("base64").replace(/.{76}/g, "$&\r\n");
  return Buffer.from(
    [
      "From: noreply-dmarc-support@google.com",
      "To: dmarc@ledger.test",
      "Subject: Report domain: example.com Submitter: google.com Report-ID: 11038226378739404135",
      "MIME-Version: 1.0",
      'Content-Type: multipart/mixed; boundary="part"',
      "",
      "--part",
      "Content-Type: text/plain; charset=us-ascii",
      "",
      "The report is attached.",
      "--part",
      'Content-Type: application/gzip; name="google.com!example.com!1718236800!1718323199.xml.gz"',
      "Content-Transfer-Encoding: base64",
      'Content-Disposition: attachment; filename="google.com!example.com!1718236800!1718323199.xml.gz"',
      "",
      base64,
      "--part--",
      "",
    ].join("\r\n"),
  );
}

/** An mbox (mboxrd) of whole mails: a "From " line before each, body "From " lines quoted. */
function mbox(mails: Buffer[]): Buffer {
  return Buffer.concat(
    mails.map((mail) => {
      const text = mail.toString("latin1").replace(/^From [^\n]*\n/, "");
      const quoted = text.replace(/^(>*From )/gm, ">$1");
      return Buffer.from(`From reporter@example.net Mon Nov 23 10:00:00 2026\n${quoted}\n\n`, "latin1");
    }),
  );
}

/** nice-input.xml for a subdomain (and a report id of its own): a report only the parent's owner may see. */
const subdomainReport = Buffer.from(
  niceXml
    .toString("utf8")
    .replace("<report_id>11038226378739404135</report_id>", "<report_id>subdomain-copy-1</report_id>")
    .replace(/(<policy_published>\s*<domain>)example\.com</, "$1news.example.com<"),
);

describe.each(backends)(
  "report intake through upload and import, counted once, on %s",
  (_name, makeBackend) => {
    let backend: Backend;
    let handle: ServiceHandle;
    let work: string;
    let acme: { tenantId: string; apiKey: string };
    let other: { tenantId: string; apiKey: string };
    let readOnly: string;
    let imported: { code: number; out: string; err: string };
    const limit = 100_000;

    const post = async (
      key: string,
      body: RequestInit["body"],
      contentType?: string,
      extra: RequestInit = {},
    ) => {
      const response = await fetch(new URL("reports", handle.service.apiRoot), {
        method: "POST",
        headers: { Authorization: `Bearer ${key}`, ...(contentType ? { "Content-Type": contentType } : {}) },
        body,
        ...extra,
      });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    const records = async (path: string, key: string) => {
      const response = await handle.get(path, key);
      expect(response.status, `${path}: ${response.body}`).toBe(200);
      return response.json as { total: number | string; records: Record<string, string>[] };
    };

    beforeAll(async () => {
      backend = await makeBackend();
      work = mkdtempSync(join(tmpdir(), "dl-intake-"));
      acme = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out);
      other = JSON.parse((await cli(backend.env, "tenant", "create", "other", "--json")).out);
      readOnly = JSON.parse(
        (await cli(backend.env, "tenant", "key", "issue", acme.tenantId, "--scopes", "read", "--json")).out,
      ).apiKey;
      // Import, before the service runs (embedded mode: one process holds the data directory):
      // the gzip form of nice-input, one failure report, an mbox of two more, and junk.
      writeFileSync(join(work, "nice-input.xml.gz"), niceGz);
      writeFileSync(join(work, linkedin), failure(linkedin));
      writeFileSync(join(work, "reports.mbox"), mbox([failure(exim), failure(domainDe)]));
      writeFileSync(join(work, "notes.txt"), "not a report\n");
      imported = await cli(backend.env, "import", work);
      handle = await startTestService({ ...backend.env, MAX_REPORT_BYTES: String(limit) });
    });
    afterAll(async () => {
      await handle?.stop();
      await backend?.cleanup();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    it("imports files, directories and mbox messages, summarises, and exits 2 for rejected input", () => {
      expect(imported.code, imported.err).toBe(2);
      expect(imported.out).toContain(
        `${join(work, "reports.mbox")}#1: failure report for example.com (stored)`,
      );
      expect(imported.out).toContain(
        `${join(work, "reports.mbox")}#2: failure report for domain.de (stored)`,
      );
      expect(imported.out).toMatch(
        /nice-input\.xml\.gz: aggregate report for example\.com, 20 rows, 3047 messages \(stored\)/,
      );
      expect(imported.err).toMatch(/notes\.txt: rejected \(not_a_report\)/);
      expect(imported.out).toContain(
        "5 inputs read: 4 reports stored, 0 duplicates, 1 inputs rejected (kept with the reason).",
      );
      expect(imported.out).toContain("Rejected: not_a_report 1.");
      expect(imported.out).toMatch(/notes\.txt: not_a_report: /);
    });

    it("refuses a POST without the ingest scope, an empty body, and a body over MAX_REPORT_BYTES", async () => {
      expect(await post(readOnly, niceXml, "application/xml")).toEqual({
        status: 403,
        json: { status: "ERROR", code: "missing_scope", message: expect.any(String) },
      });
      expect(await post(acme.apiKey, new Uint8Array(), "application/octet-stream")).toMatchObject({
        status: 400,
        json: { status: "ERROR", code: "invalid_body" },
      });
      const big = Buffer.alloc(limit + 1, "a");
      const tooLarge = {
        status: 413,
        json: {
          status: "ERROR",
          code: "body_too_large",
          message: `Report bodies are limited to ${limit} bytes (MAX_REPORT_BYTES).`,
        },
      };
      expect(await post(acme.apiKey, big, "application/octet-stream")).toEqual(tooLarge);
      // Without a Content-Length (chunked): the limit applies as the body streams in.
      const chunked = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let sent = 0; sent <= limit; sent += 10_000) controller.enqueue(new Uint8Array(10_000));
          controller.close();
        },
      });
      expect(
        await post(acme.apiKey, chunked, "application/octet-stream", { duplex: "half" } as RequestInit),
      ).toEqual(tooLarge);
      const archived = await handle.runtime.db
        .withTables<{ raw_input: { sha256: string } }>()
        .selectFrom("raw_input")
        .select("sha256")
        .where("sha256", "=", sha256Hex(big))
        .execute();
      expect(archived).toEqual([]);
    });

    it("counts one report once, whether bare, gzipped, zipped, mailed, uploaded or imported", async () => {
      const forms: [string, Buffer, string][] = [
        ["bare XML", niceXml, "application/xml"],
        ["gzip (imported before)", niceGz, "application/gzip"],
        ["zip", niceZip, "application/octet-stream"],
        ["mail", reportMail(niceGz), "message/rfc822"],
      ];
      for (const [form, bytes, type] of forms) {
        const answer = await post(acme.apiKey, bytes, type);
        expect(answer.status, form).toBe(202);
        expect(answer.json, form).toMatchObject({
          status: "SUCCESS",
          sha256: sha256Hex(bytes),
          bytes: bytes.byteLength,
          outcome: "duplicate",
          items: [
            {
              kind: "aggregate",
              identity: expect.stringMatching(/^[0-9a-f]{64}$/),
              domain: "example.com",
              rows: 20,
              messages: niceMessages,
              status: "duplicate",
            },
          ],
        });
      }
      // Reports for a domain no tenant has are stored; they count once a tenant adds the domain.
      expect((await records(`aggregate_by_domain?${period}`, acme.apiKey)).records).toEqual([]);
      expect((await handle.put("add-domain", acme.apiKey, { domain: "example.com" })).status).toBe(200);
      const byDomain = await records(`aggregate_by_domain?${period}`, acme.apiKey);
      expect(byDomain.records).toEqual([
        expect.objectContaining({ Domain: "example.com", Volume: String(niceMessages) }),
      ]);
      // The archive keeps each form once, each with what it held.
      const archive = await handle.runtime.db
        .withTables<{ raw_input: { sha256: string; channel: string; status: string } }>()
        .selectFrom("raw_input")
        .select(["sha256", "channel", "status"])
        .where(
          "sha256",
          "in",
          forms.map(([, bytes]) => sha256Hex(bytes)),
        )
        .execute();
      expect(new Map(archive.map((row) => [row.sha256, [row.channel, row.status]]))).toEqual(
        new Map([
          [sha256Hex(niceXml), ["upload", "duplicate"]],
          [sha256Hex(niceGz), ["import", "stored"]],
          [sha256Hex(niceZip), ["upload", "duplicate"]],
          [sha256Hex(reportMail(niceGz)), ["upload", "duplicate"]],
        ]),
      );
    });

    it("takes a multipart form upload (curl -F file=@…), each file part one input", async () => {
      // What `curl -F file=@a.xml.gz -F file=@b.eml -F note=hello $API/reports` sends.
      const form = new FormData();
      form.append("file", new Blob([niceGz]), "nice-input.xml.gz");
      form.append("file", new Blob([failure(netease)]), "netease.eml");
      form.append("note", "hello");
      const answer = await post(acme.apiKey, form);
      expect(answer.status, JSON.stringify(answer.json)).toBe(202);
      expect(answer.json).toEqual({
        status: "SUCCESS",
        inputs: [
          {
            field: "file",
            filename: "nice-input.xml.gz",
            sha256: sha256Hex(niceGz),
            bytes: niceGz.byteLength,
            archive: "seen",
            outcome: "duplicate",
            rowsDropped: 0,
            items: [
              expect.objectContaining({ kind: "aggregate", domain: "example.com", status: "duplicate" }),
            ],
          },
          {
            field: "file",
            filename: "netease.eml",
            sha256: sha256Hex(failure(netease)),
            bytes: failure(netease).byteLength,
            archive: expect.stringMatching(/^(new|seen)$/),
            outcome: expect.stringMatching(/^(stored|duplicate)$/),
            rowsDropped: 0,
            items: [expect.objectContaining({ kind: "failure" })],
          },
        ],
      });
      const archived = await handle.runtime.db
        .withTables<{ raw_input: { sha256: string; channel: string } }>()
        .selectFrom("raw_input")
        .select(["sha256", "channel"])
        .where("sha256", "=", sha256Hex(failure(netease)))
        .execute();
      expect(archived).toHaveLength(1);
    });

    it("refuses a form without a file part, showing the right curl, and files over MAX_REPORT_BYTES", async () => {
      // `curl -F file=<report.xml` sends the content as a field, not a file.
      const fieldOnly = new FormData();
      fieldOnly.append("file", niceXml.toString("utf8"));
      const noFile = await post(acme.apiKey, fieldOnly);
      expect(noFile).toMatchObject({ status: 400, json: { status: "ERROR", code: "invalid_body" } });
      expect(noFile.json.message).toContain("has no file part (it has the fields file)");
      expect(noFile.json.message).toContain("-F file=@report.xml.gz");

      // Two files, each under the limit, together over it: refused, nothing of them kept.
      const half = Buffer.alloc(limit / 2 + 1, "b");
      const tooMuch = new FormData();
      tooMuch.append("file", new Blob([half]), "one");
      tooMuch.append("file", new Blob([Buffer.alloc(limit / 2 + 1, "c")]), "two");
      expect(await post(acme.apiKey, tooMuch)).toMatchObject({
        status: 413,
        json: { status: "ERROR", code: "body_too_large" },
      });
      const kept = await handle.runtime.db
        .withTables<{ raw_input: { sha256: string } }>()
        .selectFrom("raw_input")
        .select("sha256")
        .where("sha256", "=", sha256Hex(half))
        .execute();
      expect(kept).toEqual([]);

      const empty = new FormData();
      empty.append("file", new Blob([]), "empty.xml");
      expect(await post(acme.apiKey, empty)).toMatchObject({
        status: 400,
        json: { code: "invalid_body", message: 'The file part "file" (empty.xml) is empty.' },
      });
      const many = new FormData();
      for (let index = 0; index <= 100; index++)
        many.append("file", new Blob([`r${index}`]), `r${index}.xml`);
      expect(await post(acme.apiKey, many)).toMatchObject({
        status: 400,
        json: { code: "invalid_body", message: expect.stringContaining("at most 100 files") },
      });
      // A multipart type without its boundary is no form at all.
      expect(await post(acme.apiKey, niceXml, "multipart/form-data")).toMatchObject({
        status: 400,
        json: { code: "invalid_body" },
      });
    });

    it("keeps an upload it cannot read, with the reason, and says so in the 202", async () => {
      const junk = Buffer.from("<html><body>not a report</body></html>");
      const answer = await post(acme.apiKey, junk, "text/html");
      expect(answer).toEqual({
        status: 202,
        json: {
          status: "SUCCESS",
          sha256: sha256Hex(junk),
          bytes: junk.byteLength,
          archive: "new",
          outcome: "rejected",
          rowsDropped: 0,
          items: [{ kind: "rejected", code: "not_a_report", reason: expect.any(String), status: "kept" }],
        },
      });
    });

    it("stores failure reports (ARF and plain text) from upload and import, counted once, in /forensic", async () => {
      // exim came in the mbox already; the Netease one is for a domain nobody has yet.
      for (const name of [exim, netease, "dmarc_ruf_report_linkedin.crlf.eml"]) {
        const answer = await post(acme.apiKey, failure(name), "message/rfc822");
        expect(answer.status, name).toBe(202);
        expect((answer.json.items as { kind: string }[])[0]?.kind, name).toBe("failure");
      }
      const forensic = await records(`forensic?${period}`, acme.apiKey);
      // example.com: the LinkedIn report (imported, then its CRLF copy uploaded) and exim's.
      expect(forensic.total).toBe("2");
      expect(forensic.records.every((record) => record.Domain === "example.com")).toBe(true);
      expect((await handle.put("add-domain", acme.apiKey, { domain: "cardinal.com" })).status).toBe(200);
      expect((await handle.put("add-domain", acme.apiKey, { domain: "domain.de" })).status).toBe(200);
      const after = await records(`forensic?${period}`, acme.apiKey);
      expect(after.total).toBe("4");
      expect(after.records.map((record) => record.Domain).sort()).toEqual([
        "cardinal.com",
        "domain.de",
        "example.com",
        "example.com",
      ]);
    });

    it("gives a domain tree one owner: another tenant's parent or subdomain is 409, and nothing leaks", async () => {
      const answer = await post(acme.apiKey, subdomainReport, "application/xml");
      expect(answer.json).toMatchObject({ outcome: "stored", items: [{ domain: "news.example.com" }] });
      for (const domain of ["news.example.com", "example.com", "x.news.example.com"]) {
        const taken = await handle.put("add-domain", other.apiKey, { domain });
        expect(taken.status, domain).toBe(409);
        expect(taken.json).toEqual({ status: "ERROR", code: "domain_taken", message: expect.any(String) });
        expect(JSON.stringify(taken.json)).not.toContain(acme.tenantId);
      }
      // The same with the command line.
      const refused = await cli(backend.env, "domain", "add", other.tenantId, "news.example.com").catch(
        (error: Error) => ({ code: -1, out: "", err: error.message }),
      );
      if (backend.name === "PostgreSQL") {
        expect(refused.code).toBe(1);
        expect(refused.err).toContain("belongs to another account");
      }
      expect((await handle.put("add-domain", other.apiKey, { domain: "other-tree.org" })).status).toBe(200);
      expect(
        (await handle.put("domain_group", other.apiKey, { domain: "other-tree.org", group: "Mine" })).status,
      ).toBe(200);
      for (const path of [
        "aggregate_by_domain",
        "aggregate_by_domain_group",
        "aggregate_by_source",
        "aggregate_by_unaligned_source",
        "aggregate_by_organization",
        "forensic",
      ]) {
        const seen = await records(`${path}?${period}`, other.apiKey);
        expect(seen.records, path).toEqual([]);
        expect(Number(seen.total), path).toBe(0);
      }
      const domains = await records("domains", other.apiKey);
      expect(domains.records.map((record) => record.Domain)).toEqual(["other-tree.org"]);
      // acme sees the subdomain's report under its own domain's tree.
      const acmeDomains = (await records(`aggregate_by_domain?${period}`, acme.apiKey)).records.map(
        (r) => r.Domain,
      );
      expect(acmeDomains.sort()).toEqual(["example.com", "news.example.com"]);
    });
  },
);
