import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseTlsReport, rfc8460ResultTypes, TlsReportError, tlsLimits } from "../src/index.js";
import { fixture, fixtureNames } from "./fixtures.js";

const parse = (name: string) => parseTlsReport(fixture(name));

function refusal(bytes: Uint8Array): TlsReportError {
  try {
    parseTlsReport(bytes);
  } catch (error) {
    if (error instanceof TlsReportError) return error;
    throw error;
  }
  throw new Error("the input was accepted");
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const example = () => JSON.parse(fixture("rfc8460-example.json").toString("utf8"));

describe("parseTlsReport", () => {
  it("reads RFC 8460's own example", () => {
    const report = parse("rfc8460-example.json");
    expect(report).toMatchObject({
      organization: "Company-X",
      contactInfo: "sts-reporting@example.net",
      reportId: "5065427c-23d3-47ca-b6e0-946ea0e8c4be",
      begin: Date.parse("2016-04-01T00:00:00Z") / 1000,
      end: Date.parse("2016-04-01T23:59:59Z") / 1000,
    });
    expect(report.policies).toHaveLength(1);
    const [policy] = report.policies;
    expect(policy).toMatchObject({
      policyType: "sts",
      policyDomain: "example.com",
      mxHosts: ["*.mail.example.com"],
      successfulSessions: 5326,
      failedSessions: 303,
    });
    expect(policy!.policyStrings).toHaveLength(4);
    expect(policy!.failures).toEqual([
      {
        resultType: "certificate-expired",
        sendingMtaIp: "2001:db8:abcd:12::1",
        receivingMxHostname: "mx1.mail.example.com",
        receivingMxHelo: null,
        receivingIp: null,
        failedSessions: 100,
        additionalInformation: null,
        failureReasonCode: null,
      },
      {
        resultType: "starttls-not-supported",
        sendingMtaIp: "2001:db8:abcd:13::1",
        receivingMxHostname: "mx2.mail.example.com",
        receivingMxHelo: null,
        receivingIp: "203.0.113.56",
        failedSessions: 200,
        additionalInformation:
          "https://reports.example.net/report_info?id=5065427c-23d3#StarttlsNotSupported",
        failureReasonCode: null,
      },
      {
        resultType: "validation-failure",
        sendingMtaIp: "198.51.100.62",
        receivingMxHostname: "mx-backup.mail.example.com",
        receivingMxHelo: null,
        receivingIp: "203.0.113.58",
        failedSessions: 3,
        additionalInformation: null,
        failureReasonCode: "X509_V_ERR_PROXY_PATH_LENGTH_EXCEEDED",
      },
    ]);
  });

  it("reads the schema's names (mx-host-pattern, additional-info-uri) as the example's", () => {
    const [policy] = parse("schema-names-mx-host-pattern.json").policies;
    expect(policy!.mxHosts).toEqual(["*.mail.example.com"]);
    expect(policy!.failures[0]).toMatchObject({
      receivingMxHostname: "mx1.mail.example.com",
      receivingMxHelo: "mx1.mail.example.com",
      additionalInformation: "https://reports.example.net/report_info?id=5065427c-23d3-47ca#HostMismatch",
      failureReasonCode: "X509_V_ERR_HOSTNAME_MISMATCH",
    });
  });

  it("takes a report without sending-mta-ip and with contact-info null or absent", () => {
    const microsoft = parse("microsoft-no-sending-ip.json");
    expect(microsoft.contactInfo).toBeNull();
    expect(microsoft.policies[0]!.failures.map((failure) => failure.sendingMtaIp)).toEqual([null, null]);
    expect(parse("postfix-no-policy-domain.json").contactInfo).toBeNull();
  });

  it("gives a no-policy-found entry without policy-domain the report's domain, and says so", () => {
    const report = parse("postfix-no-policy-domain.json");
    expect(report.policies.map((policy) => [policy.policyType, policy.policyDomain])).toEqual([
      ["tlsa", "example.org"],
      ["no-policy-found", "example.org"],
    ]);
    expect(report.warnings).toEqual([
      "a no-policy-found entry names no policy-domain: counted for example.org",
    ]);
    const alone = example();
    alone.policies[0].policy = { "policy-type": "no-policy-found" };
    const unowned = parseTlsReport(json(alone));
    expect(unowned.policies[0]!.policyDomain).toBe("");
    expect(unowned.warnings[0]).toMatch(/counts for no domain/);
  });

  it("keeps the eleven result types of RFC 8460 and an unknown one as sent", () => {
    const seen = new Set(
      fixtureNames.flatMap((name) =>
        parse(name).policies.flatMap((policy) => policy.failures.map((failure) => failure.resultType)),
      ),
    );
    for (const type of rfc8460ResultTypes) expect(seen).toContain(type);
    expect(seen).toContain("certificate-revoked");
    expect(seen.size).toBe(rfc8460ResultTypes.length + 1);
  });

  it("names a report by organisation and report id, whatever its spelling or packing", () => {
    const once = parse("rfc8460-example.json");
    const compact = parseTlsReport(json(example()));
    expect(compact.identity).toBe(once.identity);
    const other = example();
    other["report-id"] = "another";
    expect(parseTlsReport(json(other)).identity).not.toBe(once.identity);
  });

  it("lower-cases the policy domain and drops its final dot", () => {
    expect(parse("unknown-result-two-days.json").policies[0]!.policyDomain).toBe("example.com");
  });
});

describe("parseTlsReport refuses what is not a report", () => {
  it("refuses wrong types with the field's path", () => {
    const wrong = example();
    wrong.policies[0].summary["total-failure-session-count"] = "303";
    const error = refusal(json(wrong));
    expect(error.code).toBe("invalid_tls_report");
    expect(error.message).toContain("policies[0].summary.total-failure-session-count");
    const notList = example();
    notList.policies = { policy: {} };
    expect(refusal(json(notList)).code).toBe("invalid_tls_report");
  });

  it("refuses negative, fractional and huge counts", () => {
    for (const count of [-1, 1.5, tlsLimits.maxSessions + 1]) {
      const wrong = example();
      wrong.policies[0]["failure-details"][0]["failed-session-count"] = count;
      expect(["count_out_of_range", "invalid_tls_report"]).toContain(refusal(json(wrong)).code);
    }
  });

  it("refuses deep nesting before parsing it", () => {
    const deep = Buffer.from(`${"[".repeat(100_000)}${"]".repeat(100_000)}`);
    expect(refusal(deep).code).toBe("nesting_too_deep");
    const nested = example();
    nested.policies[0].policy.extra = { a: { b: { c: { d: {} } } } };
    expect(refusal(json(nested)).code).toBe("nesting_too_deep");
  });

  it("refuses huge arrays, one list or the whole report's details", () => {
    const huge = example();
    huge.policies[0]["failure-details"] = new Array(tlsLimits.maxFailureDetails + 1).fill(0);
    expect(refusal(json(huge)).code).toBe("too_many_entries");
    const many = example();
    const detail = many.policies[0]["failure-details"][0];
    const half = new Array(tlsLimits.maxFailureDetails / 2 + 1).fill(detail);
    many.policies = [0, 1].map(() => ({ ...example().policies[0], "failure-details": half }));
    expect(refusal(json(many)).code).toBe("too_many_entries");
  });

  it("refuses long fields, bad dates, bad JSON and JSON past its size", () => {
    const long = example();
    long["organization-name"] = "x".repeat(tlsLimits.maxFieldChars + 1);
    expect(refusal(json(long)).code).toBe("field_too_long");
    const dates = example();
    dates["date-range"]["start-datetime"] = "yesterday";
    expect(refusal(json(dates)).code).toBe("invalid_date_range");
    const backwards = example();
    backwards["date-range"]["end-datetime"] = "2016-03-01T00:00:00Z";
    expect(refusal(json(backwards)).code).toBe("invalid_date_range");
    expect(refusal(Buffer.from('{"organization-name": ')).code).toBe("malformed_json");
    expect(refusal(new Uint8Array(tlsLimits.maxJsonBytes + 1).fill(0x20)).code).toBe("json_too_large");
    expect(refusal(gzipSync(fixture("rfc8460-example.json"))).code).toBe("malformed_json");
  });
});
