import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { fixture } from "../../tls-reports/test/fixtures.js";
import { parseReports, ReportParseError } from "../src/index.js";

const example = fixture("rfc8460-example.json");

/** A mail with the report as one base64 part of `type`, as RFC 8460 §5.3 sends it. */
function mail(type: string, body: Buffer): Buffer {
  return Buffer.from(
    [
      "From: tlsrpt@mail.example.net",
      "To: tlsrpt@example.com",
      "Subject: Report Domain: example.com Submitter: example.net Report-ID: <5065427c>",
      "TLS-Report-Domain: example.com",
      "MIME-Version: 1.0",
      'Content-Type: multipart/report; report-type="tlsrpt"; boundary="b"',
      "",
      "--b",
      "Content-Type: text/plain",
      "",
      "This is an aggregate TLS report.",
      "--b",
      `Content-Type: ${type}`,
      "Content-Transfer-Encoding: base64",
      "",
      body.toString("base64").replace(/.{76}/g, "$&\r\n"),
      "--b--",
      "",
    ].join("\r\n"),
  );
}

async function onlyTls(bytes: Uint8Array) {
  const reports = await parseReports(bytes);
  expect(reports.map((report) => report.kind)).toEqual(["tls"]);
  return reports[0]!.report;
}

describe("SMTP TLS reports among the other inputs", () => {
  it("reads one as JSON, gzip'd JSON and a mail's tlsrpt+json or tlsrpt+gzip part, alike", async () => {
    const bare = await onlyTls(example);
    expect(bare).toMatchObject({ organization: "Company-X", policies: [{ policyDomain: "example.com" }] });
    for (const form of [
      gzipSync(example),
      mail("application/tlsrpt+json", example),
      mail("application/tlsrpt+gzip", gzipSync(example)),
      mail("application/json", example),
      Buffer.concat([Buffer.from("\uFEFF  \n"), example]),
    ]) {
      expect(await onlyTls(form)).toEqual(bare);
    }
  });

  it("refuses a broken one with the TLS parser's code and where it was", async () => {
    const wrong = JSON.parse(example.toString("utf8"));
    wrong.policies[0].summary["total-successful-session-count"] = "5326";
    const bytes = gzipSync(Buffer.from(JSON.stringify(wrong)));
    const error = await parseReports(bytes).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ReportParseError);
    expect(error).toMatchObject({ code: "invalid_tls_report" });
    expect((error as Error).message).toMatch(/^gzip content: not an SMTP TLS report: policies\[0\]\.summary/);
  });

  it("does not take a text part that happens to start with a brace for a report", async () => {
    const error = await parseReports(mail("text/plain", Buffer.from('{"not": "a report"}'))).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: "no_report_in_mail" });
  });
});
