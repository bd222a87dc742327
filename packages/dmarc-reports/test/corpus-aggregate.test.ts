import { describe, expect, it } from "vitest";
import { parseReports, ReportParseError } from "../src/index.js";
import { corpusFile, onlyAggregate } from "./helpers/corpus.js";

// Expected values are read off the corpus files by hand (see the XML in each file), not from the parser.

const noPolicyExtras = { np: null, testing: null, discoveryMethod: null };

describe("aggregate corpus, field by field", () => {
  it("!example.com!1538204542!1538463818.xml: empty org_name falls back to the email's domain", async () => {
    const report = await onlyAggregate("aggregate/!example.com!1538204542!1538463818.xml");
    const { rows, identity, ...header } = report;
    expect(header).toEqual({
      schema: "draft",
      orgName: "",
      organization: "accurateplastics.com",
      email: "administrator@accurateplastics.com",
      reportId: "example.com:1538463741",
      begin: 1538413632,
      end: 1538413632,
      policy: {
        domain: "example.com",
        adkim: "r",
        aspf: "r",
        p: "none",
        sp: "reject",
        pct: 100,
        fo: null,
        ...noPolicyExtras,
      },
      warnings: [],
      dropped: [],
    });
    expect(identity).toMatch(/^[0-9a-f]{64}$/);
    expect(rows).toEqual([
      {
        sourceIp: "12.20.127.122",
        count: 1,
        disposition: "none",
        policyDkim: "fail",
        policySpf: "fail",
        reasons: [],
        arc: null,
        headerFrom: "example.com",
        envelopeFrom: null,
        envelopeTo: null,
        dkim: [],
        spf: [{ domain: "", scope: null, result: "none" }],
      },
    ]);
  });

  it("addisonfoods.com…xml: version 1.0, dkim with selector, no spf", async () => {
    const report = await onlyAggregate("aggregate/addisonfoods.com!example.com!1536105600!1536191999.xml");
    expect(report.schema).toBe("rfc7489");
    expect(report.organization).toBe("addisonfoods.com");
    expect(report.reportId).toBe("3ceb5548498640beaeb47327e202b0b9");
    expect([report.begin, report.end]).toEqual([1536105600, 1536191999]);
    expect(report.policy).toEqual({
      domain: "example.com",
      adkim: "r",
      aspf: "r",
      p: "none",
      sp: "none",
      pct: 100,
      fo: "0",
      ...noPolicyExtras,
    });
    expect(report.rows).toEqual([
      {
        sourceIp: "109.203.100.17",
        count: 1,
        disposition: "none",
        policyDkim: "fail",
        policySpf: "fail",
        reasons: [],
        arc: null,
        headerFrom: "example.com",
        envelopeFrom: "example.com",
        envelopeTo: null,
        dkim: [{ domain: "toptierhighticket.club", selector: "default", result: "pass", humanResult: null }],
        spf: [],
      },
    ]);
  });

  it("empty_reason.xml: an empty <reason> is dropped; envelope_to, human_result and scope are kept", async () => {
    const report = await onlyAggregate("aggregate/empty_reason.xml");
    expect(report.orgName).toBe("example.org");
    expect(report.email).toBe("noreply-dmarc-support@example.org");
    expect(report.reportId).toBe("20240125141224705995");
    expect([report.begin, report.end]).toEqual([1706159544, 1706185733]);
    expect(report.policy.p).toBe("quarantine");
    expect(report.policy.fo).toBe("1");
    expect(report.rows).toEqual([
      {
        sourceIp: "198.51.100.123",
        count: 2,
        disposition: "none",
        policyDkim: "pass",
        policySpf: "fail",
        reasons: [],
        arc: null,
        headerFrom: "example.com",
        envelopeFrom: "example.edu",
        envelopeTo: "example.net",
        dkim: [{ domain: "example.com", selector: "example", result: "pass", humanResult: "2048-bit key" }],
        spf: [{ domain: "example.edu", scope: "mfrom", result: "pass" }],
      },
    ]);
  });

  it("example.net…xml: stray text after </sp> is tolerated, empty auth_results", async () => {
    const report = await onlyAggregate("aggregate/example.net!example.com!1529366400!1529452799.xml");
    expect(report.reportId).toBe("b043f0e264cf4ea995e93765242f6dfb");
    expect(report.policy.sp).toBe("none");
    expect(report.policy.pct).toBe(100);
    expect(report.rows).toHaveLength(1);
    expect(report.rows[0]).toMatchObject({ sourceIp: "199.230.200.36", count: 1, dkim: [], spf: [] });
    expect(report.rows[0]!.envelopeFrom).toBe("example.com");
  });

  it("fastmail….xml.gz: gzip; org_name with spaces is kept whole, lower-case", async () => {
    const report = await onlyAggregate(
      "aggregate/fastmail.com!example.com!1516060800!1516147199!102675056.xml.gz",
    );
    expect(report.orgName).toBe("FastMail Pty Ltd");
    expect(report.organization).toBe("fastmail pty ltd");
    expect(report.email).toBe("reports@fastmaildmarc.com");
    expect(report.reportId).toBe("102675056");
    expect(report.policy).toEqual({
      domain: "indemed.com",
      adkim: null,
      aspf: null,
      p: "none",
      sp: "none",
      pct: 100,
      fo: "0",
      ...noPolicyExtras,
    });
    expect(report.rows).toEqual([
      {
        sourceIp: "104.195.80.20",
        count: 1,
        disposition: "none",
        policyDkim: "fail",
        policySpf: "fail",
        reasons: [],
        arc: null,
        headerFrom: "example.com",
        envelopeFrom: "example.com",
        envelopeTo: "fastmail.fm",
        dkim: [],
        spf: [{ domain: "example.com", scope: "mfrom", result: "softfail" }],
      },
    ]);
  });

  it("estadocuenta1….xml.zip: zip; report_id before org_name", async () => {
    const report = await onlyAggregate(
      "aggregate/estadocuenta1.infonacot.gob.mx!example.com!1536853302!1536939702!2940.xml.zip",
    );
    expect(report.orgName).toBe("XYZ Corporation");
    expect(report.organization).toBe("xyz corporation");
    expect(report.email).toBe("admin@estadocuenta1.infonacot.gob.mx");
    expect(report.reportId).toBe("2940");
    expect([report.begin, report.end]).toEqual([1536853302, 1536939702]);
    expect(report.policy.domain).toBe("example.com");
    expect(report.policy.p).toBe("none");
    expect(report.policy.adkim).toBeNull();
    expect(report.rows).toEqual([
      {
        sourceIp: "148.243.137.254",
        count: 1,
        disposition: "none",
        policyDkim: "fail",
        policySpf: "fail",
        reasons: [],
        arc: null,
        headerFrom: "example.com",
        envelopeFrom: null,
        envelopeTo: "estadocuenta1.infonacot.gob.mx",
        dkim: [],
        spf: [],
      },
    ]);
  });

  it("ikea.com…xml: the unclosed xs:schema before <feedback> is recovered with a warning", async () => {
    const report = await onlyAggregate("aggregate/ikea.com!example.de!1538690400!1538776800.xml");
    expect(report.organization).toBe("ikea.com");
    expect(report.email).toBe("double-bounce@ikea.com");
    expect(report.reportId).toBe("aggr_report_2018_10_05_5bc7e9b4f3e8a");
    expect(report.policy.domain).toBe("example.de");
    expect(
      report.warnings.some((w) => w.startsWith("recovered from invalid XML:") && w.includes("xs:schema")),
    ).toBe(true);
    expect(report.rows).toEqual([
      {
        sourceIp: "234.234.234.234",
        count: 1,
        disposition: "none",
        policyDkim: "fail",
        policySpf: "fail",
        reasons: [],
        arc: null,
        headerFrom: "example.de",
        envelopeFrom: "example.de",
        envelopeTo: null,
        dkim: [{ domain: "example.de", selector: null, result: "pass", humanResult: null }],
        spf: [{ domain: "mailrelay.com", scope: "helo", result: "none" }],
      },
    ]);
  });

  it("invalid_utf_8.xml: the invalid byte becomes U+FFFD, with a warning", async () => {
    const report = await onlyAggregate("aggregate/invalid_utf_8.xml");
    expect(report.reportId).toBe("example.com:1538463741");
    expect(report.rows).toHaveLength(1);
    expect(report.rows[0]!.headerFrom).toBe("bad_byte\uFFFD");
    expect(report.warnings).toContain("recovered from invalid UTF-8: bytes replaced by U+FFFD");
  });

  it("invalid_xml.xml: broken tags are recovered, the row is kept, warnings say so", async () => {
    const report = await onlyAggregate("aggregate/invalid_xml.xml");
    expect(report.orgName).toBe("veeam.com");
    expect(report.reportId).toBe("sonexushealth.com:1530233361");
    expect([report.begin, report.end]).toEqual([1530133200, 1530219600]);
    expect(report.rows.map((row) => [row.sourceIp, row.count])).toEqual([["199.230.200.36", 1]]);
    expect(report.warnings.length).toBeGreaterThan(0);
    expect(report.warnings.every((w) => w.startsWith("recovered from invalid XML:"))).toBe(true);
  });

  it("old_draft_from_wiki.xml: draft schema, empty human_result is null", async () => {
    const report = await onlyAggregate("aggregate/old_draft_from_wiki.xml");
    expect(report.schema).toBe("draft");
    expect(report.organization).toBe("acme.com");
    expect(report.reportId).toBe("9391651994964116463");
    expect([report.begin, report.end]).toEqual([1335571200, 1335657599]);
    expect(report.rows).toEqual([
      {
        sourceIp: "72.150.241.94",
        count: 2,
        disposition: "none",
        policyDkim: "fail",
        policySpf: "pass",
        reasons: [],
        arc: null,
        headerFrom: "example.com",
        envelopeFrom: null,
        envelopeTo: null,
        dkim: [{ domain: "example.com", selector: null, result: "fail", humanResult: null }],
        spf: [{ domain: "example.com", scope: null, result: "pass" }],
      },
    ]);
  });

  it("protection.outlook.com…xml: Outlook.com is lower-cased to its registrable domain", async () => {
    const report = await onlyAggregate(
      "aggregate/protection.outlook.com!example.com!1711756800!1711843200.xml",
    );
    expect(report.orgName).toBe("Outlook.com");
    expect(report.organization).toBe("outlook.com");
    expect(report.email).toBe("dmarcreport@microsoft.com");
    expect(report.reportId).toBe("cfeafefe4129445e8c81018bd9177197");
    expect(report.rows[0]).toMatchObject({
      sourceIp: "100.24.188.149",
      envelopeTo: "hotmail.com",
      envelopeFrom: "example.com",
      spf: [{ domain: "example.com", scope: "mfrom", result: "fail" }],
    });
  });

  it("rfc9990-example.net…xml: version 2.0, np/testing/discovery_method, a reason", async () => {
    const report = await onlyAggregate("aggregate/rfc9990-example.net!example.com!1700000000!1700086399.xml");
    expect(report.schema).toBe("rfc9990");
    expect(report.reportId).toBe("dmarcbis-test-report-001");
    expect(report.policy).toEqual({
      domain: "example.com",
      adkim: "s",
      aspf: "s",
      p: "reject",
      sp: "quarantine",
      np: "reject",
      pct: null,
      fo: "1",
      testing: "y",
      discoveryMethod: "treewalk",
    });
    expect(report.rows.map((row) => [row.sourceIp, row.count, row.disposition])).toEqual([
      ["198.51.100.1", 5, "none"],
      ["203.0.113.10", 2, "reject"],
    ]);
    expect(report.rows[1]!.reasons).toEqual([{ type: "other", comment: "sender not authorized" }]);
    expect(report.rows[1]!.arc).toBeNull();
    expect(report.rows[1]!.envelopeFrom).toBe("spoofed.example.com");
  });

  it("rfc9990-sample.xml: dmarc-2.0 namespace with <version>1.0</version>, disposition pass", async () => {
    const report = await onlyAggregate("aggregate/rfc9990-sample.xml");
    expect(report.schema).toBe("rfc9990");
    expect(report.orgName).toBe("Sample Reporter");
    expect(report.organization).toBe("sample reporter");
    expect(report.reportId).toBe("3v98abbp8ya9n3va8yr8oa3ya");
    expect([report.begin, report.end]).toEqual([302832000, 302918399]);
    expect(report.policy).toMatchObject({ p: "quarantine", sp: "none", np: "none", testing: "n" });
    expect(report.rows).toEqual([
      {
        sourceIp: "192.0.2.123",
        count: 123,
        disposition: "pass",
        policyDkim: "pass",
        policySpf: "fail",
        reasons: [],
        arc: null,
        headerFrom: "example.com",
        envelopeFrom: "example.com",
        envelopeTo: null,
        dkim: [{ domain: "example.com", selector: "abc123", result: "pass", humanResult: null }],
        spf: [{ domain: "example.com", scope: null, result: "fail" }],
      },
    ]);
  });

  it("usssa.com…xml: two rows, empty envelope_from is null", async () => {
    const report = await onlyAggregate("aggregate/usssa.com!example.com!1538784000!1538870399.xml");
    expect(report.reportId).toBe("8953b4d4a4ee4218b6ac0e2cb2667ee1");
    expect(report.rows.map((row) => [row.sourceIp, row.count, row.envelopeFrom])).toEqual([
      ["12.20.127.40", 1, null],
      ["199.230.200.36", 1, null],
    ]);
  });

  it("veeam.com…xml", async () => {
    const report = await onlyAggregate("aggregate/veeam.com!example.com!1530133200!1530219600.xml");
    expect(report.email).toBe("noreply.it.dmarc@veeam.com");
    expect(report.reportId).toBe("sonexushealth.com:1530233361");
    expect(report.rows.map((row) => [row.sourceIp, row.count])).toEqual([["199.230.200.36", 1]]);
  });

  it("report_with_upper_cased_pass.xml: Pass/None are lower-cased, trailing space in org_name trimmed", async () => {
    const report = await onlyAggregate("aggregate_invalid/report_with_upper_cased_pass.xml");
    expect(report.orgName).toBe("example.com");
    expect(report.organization).toBe("example.com");
    expect(report.reportId).toBe("aggr_report_example.com_20191202_1638");
    expect(report.rows).toEqual([
      {
        sourceIp: "23.104.41.189",
        count: 1,
        disposition: "none",
        policyDkim: "pass",
        policySpf: "pass",
        reasons: [],
        arc: null,
        headerFrom: "example.com",
        envelopeFrom: null,
        envelopeTo: null,
        dkim: [
          {
            domain: "example.com",
            selector: null,
            result: "pass",
            humanResult: "verify result: all signatures verified",
          },
        ],
        spf: [{ domain: "example.com", scope: null, result: "pass" }],
      },
    ]);
  });
});

describe("aggregate corpus, counts and rows", () => {
  it("!large-example.com…xml: 2,286 records of count 1, 12.20.121.1 first, 12.20.129.254 last", async () => {
    const report = await onlyAggregate("aggregate/!large-example.com!1711897200!1711983600.xml");
    expect(report.reportId).toBe("example.com:1711897200");
    expect(report.rows).toHaveLength(2286);
    expect(report.rows.reduce((sum, row) => sum + row.count, 0)).toBe(2286);
    expect(report.rows[0]!.sourceIp).toBe("12.20.121.1");
    expect(report.rows.at(-1)!.sourceIp).toBe("12.20.129.254");
  });

  it("Report domain- borschow.com….eml: zip attachment in a mail", async () => {
    const report = await onlyAggregate(
      "aggregate/Report domain- borschow.com Submitter- google.com Report-ID- 949348866075514174.eml",
    );
    expect(report.organization).toBe("google.com");
    expect(report.reportId).toBe("949348866075514174");
    expect(report.policy.domain).toBe("borschow.com");
    expect([report.begin, report.end]).toEqual([1549929600, 1550015999]);
    expect(report.rows.map((row) => [row.sourceIp, row.count, row.disposition])).toEqual([
      ["92.53.116.102", 1, "reject"],
    ]);
  });

  it("twilight.eml: zip attachment next to a quoted-printable text part", async () => {
    const report = await onlyAggregate("aggregate/twilight.eml");
    expect(report.reportId).toBe("1627703331531660819");
    expect(report.policy.domain).toBe("twlnet.com");
    expect(report.rows.map((row) => [row.sourceIp, row.count])).toEqual([["87.106.127.28", 1]]);
    expect(report.rows[0]!.dkim).toEqual([
      { domain: "twlnet.com", selector: "201810", result: "pass", humanResult: null },
    ]);
  });

  it("mimecast-weird-gzip.eml: gzip with bytes after its end", async () => {
    const report = await onlyAggregate("aggregate/mimecast-weird-gzip.eml");
    expect(report.orgName).toBe("Mimecast");
    expect(report.organization).toBe("mimecast");
    expect(report.reportId).toBe("157a5fe30ec76f4bc0d8bccfc96c118a167a1280fee7c7465af5115e73082e5e");
    expect(report.policy.domain).toBe("ab.id.au");
    expect(report.rows.map((row) => [row.sourceIp, row.count])).toEqual([["40.93.199.22", 1]]);
    expect(report.rows[0]!.dkim).toEqual([
      { domain: "ab.id.au", selector: "selector1", result: "pass", humanResult: null },
    ]);
    expect(report.warnings).toContain("ignored bytes after the end of the gzip data");
  });

  // nice-input: 20 records; counts summed by hand from the file.
  const niceCounts = [1, 2, 40, 40, 33, 40, 24, 12, 1, 36, 27, 25, 2252, 46, 37, 1, 24, 23, 24, 359];
  for (const file of ["nice-input.xml", "nice-input.xml.gz", "nice-input.xml.zip"]) {
    it(`extract_report/${file}: same 20 rows whatever the container`, async () => {
      const report = await onlyAggregate(`extract_report/${file}`);
      expect(report.orgName).toBe("google.com");
      expect(report.reportId).toBe("11038226378739404135");
      expect(report.rows.map((row) => row.count)).toEqual(niceCounts);
      expect(report.rows[8]!.sourceIp).toBe("2607:f8b0:4864:20::132");
    });
  }

  it("extract_report/changed-input.xml: differs only in org_name, so its identity differs", async () => {
    const changed = await onlyAggregate("extract_report/changed-input.xml");
    const nice = await onlyAggregate("extract_report/nice-input.xml");
    expect(changed.orgName).toBe("fred.com");
    expect(changed.rows.map((row) => row.count)).toEqual(niceCounts);
    expect(changed.identity).not.toBe(nice.identity);
    const gz = await onlyAggregate("extract_report/nice-input.xml.gz");
    expect(gz.identity).toBe(nice.identity);
  });
});

describe("corpus junk", () => {
  it("empty.xml is refused as empty_input", async () => {
    const error = await parseReports(corpusFile("empty.xml")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReportParseError);
    expect((error as ReportParseError).code).toBe("empty_input");
  });
});
