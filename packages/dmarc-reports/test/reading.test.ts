import { createReadStream } from "node:fs";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseReports, type ReportItem, readReports } from "../src/index.js";
import { corpusDir } from "./helpers/corpus.js";

function feedback(records: string, root = "feedback", extra = ""): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<${root}${extra}><version>1.0</version><report_metadata><org_name>mail.google.com</org_name><email>a@google.com</email>
<report_id>&lt;abc123@google.com&gt;</report_id><date_range><begin>1700000000</begin><end>1700086399</end></date_range>
</report_metadata><policy_published><domain>Example.COM</domain><p>Reject</p></policy_published>${records}</${root}>`;
}

function record(ip: string, count: string, reason = ""): string {
  return `<record><row><source_ip>${ip}</source_ip><count>${count}</count><policy_evaluated><disposition>none</disposition>
<dkim>fail</dkim><spf>fail</spf>${reason}</policy_evaluated></row><identifiers><header_from>example.com</header_from></identifiers>
<auth_results><dkim><domain>a.example</domain><result>pass</result></dkim><dkim><domain>b.example</domain><selector>s2</selector><result>fail</result></dkim>
<spf><domain>example.com</domain><result>None</result></spf></auth_results></record>`;
}

async function only(xml: string) {
  const [parsed] = await parseReports(Buffer.from(xml));
  if (parsed?.kind !== "aggregate") throw new Error("expected an aggregate report");
  return parsed.report;
}

describe("normalisation", () => {
  it("organization, report id, IPs, several dkim results", async () => {
    const report = await only(
      feedback(
        record("::FFFF:192.0.2.7", "3") + record("2001:DB8:0:0:0:0:0:1", "4") + record("192.0.2.9", "5"),
      ),
    );
    expect(report.organization).toBe("google.com");
    expect(report.orgName).toBe("mail.google.com");
    expect(report.reportId).toBe("abc123");
    expect(report.policy.domain).toBe("example.com");
    expect(report.policy.p).toBe("reject");
    expect(report.rows.map((row) => row.sourceIp)).toEqual(["192.0.2.7", "2001:db8::1", "192.0.2.9"]);
    expect(report.rows[0]!.dkim).toEqual([
      { domain: "a.example", selector: null, result: "pass", humanResult: null },
      { domain: "b.example", selector: "s2", result: "fail", humanResult: null },
    ]);
    expect(report.rows[0]!.spf).toEqual([{ domain: "example.com", scope: null, result: "none" }]);
  });

  it("ARC from policy_override reasons", async () => {
    const pass = "<reason><type>local_policy</type><comment>arc=pass as.1.google.com=pass</comment></reason>";
    const fail = "<reason><type>arc=fail</type></reason>";
    const report = await only(
      feedback(record("192.0.2.1", "1", pass) + record("192.0.2.2", "1", fail) + record("192.0.2.3", "1")),
    );
    expect(report.rows.map((row) => row.arc)).toEqual(["pass", "fail", null]);
    expect(report.rows[0]!.reasons).toEqual([
      { type: "local_policy", comment: "arc=pass as.1.google.com=pass" },
    ]);
  });

  it("rows with a missing or bad source_ip or count are dropped and named; good rows stay", async () => {
    const report = await only(
      feedback(
        record("192.0.2.1", "1") +
          record("", "2") +
          record("999.1.1.1", "3") +
          record("192.0.2.4", "x") +
          record("192.0.2.5", "5"),
      ),
    );
    expect(report.rows.map((row) => row.sourceIp)).toEqual(["192.0.2.1", "192.0.2.5"]);
    expect(report.warnings).toEqual([
      "dropped row 2: missing source_ip",
      'dropped row 3: invalid source_ip "999.1.1.1"',
      'dropped row 4: invalid count "x"',
    ]);
  });

  it("namespace prefixes and the dmarc-2.0 namespace", async () => {
    const xml = feedback(record("192.0.2.1", "1"), "feedback", ' xmlns="urn:ietf:params:xml:ns:dmarc-2.0"')
      .replace(/<(\/?)([a-z_]+)/g, "<$1d:$2")
      .replace('xmlns="', 'xmlns:d="');
    const report = await only(xml);
    expect(report.schema).toBe("rfc9990");
    expect(report.rows).toHaveLength(1);
    expect(report.reportId).toBe("abc123");
  });

  it("XML-illegal control characters are removed with a warning", async () => {
    const report = await only(
      feedback(record("192.0.2.1", "1")).replace(
        "example.com</header_from>",
        "exa\u0001mple.com</header_from>",
      ),
    );
    expect(report.rows[0]!.headerFrom).toBe("example.com");
    expect(report.warnings).toContain("recovered from invalid XML: removed characters XML does not allow");
  });
});

describe("readReports streaming", () => {
  it("yields begin, row batches of at most rowBatch, end, from a file stream", async () => {
    const file = `${corpusDir}aggregate/!large-example.com!1711897200!1711983600.xml`;
    const items: ReportItem[] = [];
    for await (const item of readReports(createReadStream(file), { rowBatch: 500 })) items.push(item);
    expect(items[0]!.kind).toBe("aggregate-begin");
    expect(items.at(-1)!.kind).toBe("aggregate-end");
    const batches = items.filter((item) => item.kind === "aggregate-rows");
    expect(batches.map((batch) => batch.rows.length)).toEqual([500, 500, 500, 500, 286]);
  });
});

describe("mail variants", () => {
  const xml = feedback(record("192.0.2.1", "1"));

  it("a mail with two report attachments (gzip and plain XML) gives two reports", async () => {
    const second = feedback(record("192.0.2.2", "2")).replace("abc123", "def456");
    const gz = gzipSync(Buffer.from(xml)).toString("base64");
    const mail = [
      "From: r@example.org",
      "Subject: two reports",
      'Content-Type: multipart/mixed; boundary="b"',
      "",
      "--b",
      'Content-Type: application/gzip; name="a.xml.gz"',
      "Content-Transfer-Encoding: base64",
      "",
      gz,
      "--b",
      'Content-Type: text/xml; name="b.xml"',
      "",
      second,
      "--b--",
      "",
    ].join("\r\n");
    const reports = await parseReports(Buffer.from(mail));
    expect(reports.map((r) => (r.kind === "aggregate" ? r.report.reportId : r.kind))).toEqual([
      "abc123",
      "def456",
    ]);
  });

  it("more than 100 bad rows: the first 100 are named, the rest counted", async () => {
    const report = await only(feedback(record("nope", "1").repeat(150) + record("192.0.2.1", "1")));
    expect(report.rows).toHaveLength(1);
    expect(report.warnings).toHaveLength(101);
    expect(report.warnings.at(-1)).toBe("dropped 50 more rows");
  });

  it("report as the body of a mail, quoted-printable", async () => {
    const qp = xml.replace(/=/g, "=3D");
    const mail = `From: r@example.org\r\nSubject: report\r\nContent-Type: text/xml\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n${qp}`;
    const reports = await parseReports(Buffer.from(mail));
    expect(reports.map((r) => r.kind)).toEqual(["aggregate"]);
  });

  it("application/octet-stream attachment with an RFC 2231 split name, inside a forwarded message/rfc822", async () => {
    const b64 = Buffer.from(xml).toString("base64").replace(/.{76}/g, "$&\r\n");
    const inner = [
      "From: r@example.org",
      "Subject: report",
      'Content-Type: multipart/mixed; boundary="in"',
      "",
      "--in",
      "Content-Type: application/octet-stream",
      'Content-Disposition: attachment; filename*0="google.com!example.com!"; filename*1="1700000000.xml"',
      "Content-Transfer-Encoding: base64",
      "",
      b64,
      "--in--",
    ].join("\r\n");
    const outer = [
      "From: fwd@example.net",
      "Subject: Fwd",
      'Content-Type: multipart/mixed; boundary="out"',
      "",
      "--out",
      "Content-Type: text/plain",
      "",
      "see attached",
      "--out",
      "Content-Type: message/rfc822",
      "",
      inner,
      "--out--",
      "",
    ].join("\r\n");
    const reports = await parseReports(Buffer.from(outer));
    expect(reports).toHaveLength(1);
    expect(reports[0]!.kind === "aggregate" && reports[0]!.report.rows[0]!.sourceIp).toBe("192.0.2.1");
  });
});
