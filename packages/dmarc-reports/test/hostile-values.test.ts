import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseReports, ReportParseError, readReports } from "../src/index.js";
import { MAX_FIELD_CHARS, MAX_REPORT_MESSAGES, MAX_XML_NODE_CHARS } from "../src/options.js";

/** Issue 14: values that cannot be true are refused, with a code and a reason, never stored as facts. */

interface Parts {
  orgName?: string;
  domain?: string;
  begin?: string;
  end?: string;
  records?: string;
  prolog?: string;
  metadataExtra?: string;
}

function record(count: string, extra = "", sourceIp = "192.0.2.1", headerFrom = "example.com"): string {
  return `<record><row><source_ip>${sourceIp}</source_ip><count>${count}</count><policy_evaluated>
<disposition>none</disposition><dkim>pass</dkim><spf>fail</spf></policy_evaluated></row>
<identifiers><header_from>${headerFrom}</header_from></identifiers><auth_results>${extra}</auth_results></record>`;
}

function report(parts: Parts = {}): Buffer {
  return Buffer.from(`<?xml version="1.0"?>${parts.prolog ?? ""}
<feedback><report_metadata><org_name>${parts.orgName ?? "x.org"}</org_name><email>a@x.org</email>
<report_id>r1</report_id>${parts.metadataExtra ?? ""}
<date_range><begin>${parts.begin ?? "1700000000"}</begin><end>${parts.end ?? "1700086399"}</end></date_range>
</report_metadata><policy_published><domain>${parts.domain ?? "example.com"}</domain><p>none</p></policy_published>
${parts.records ?? record("1")}</feedback>`);
}

async function refusal(input: Uint8Array): Promise<ReportParseError> {
  const error = await parseReports(input).catch((e: unknown) => e);
  if (!(error instanceof ReportParseError))
    throw new Error(`expected a ReportParseError, got ${String(error)}`);
  return error;
}

describe("policy domains must be host names", () => {
  it("an entity left unexpanded is not a domain", async () => {
    const error = await refusal(
      report({ domain: "&dom;", prolog: '<!DOCTYPE feedback [<!ENTITY dom "example.com">]>' }),
    );
    expect(error.code).toBe("invalid_domain");
    expect(error.message).toContain("is not a host name");
  });

  it("lone UTF-16 surrogates (from character references) are not a domain", async () => {
    const error = await refusal(report({ domain: "ex&#xD800;ample.com" }));
    expect(error.code).toBe("invalid_domain");
  });

  it("a missing domain, spaces, a single label and a 254-character name are refused", async () => {
    for (const domain of ["", "exa mple.com", "localhost", `${`${"a".repeat(62)}.`.repeat(4)}com`]) {
      expect((await refusal(report({ domain }))).code, domain).toBe("invalid_domain");
    }
  });

  it("valid names pass, lower-cased, without a trailing dot, IDNs in punycode", async () => {
    for (const [domain, stored] of [
      ["Example.COM.", "example.com"],
      ["bücher.example", "xn--bcher-kva.example"],
      ["_dmarc-ok.sub.example.org", "_dmarc-ok.sub.example.org"],
    ] as const) {
      const [parsed] = await parseReports(report({ domain }));
      if (parsed?.kind !== "aggregate") throw new Error("expected an aggregate report");
      expect(parsed.report.policy.domain).toBe(stored);
    }
  });
});

describe("date ranges", () => {
  it("a negative range is refused", async () => {
    const error = await refusal(report({ begin: "1700086399", end: "1700000000" }));
    expect(error.code).toBe("invalid_date_range");
  });

  it("each wrong range says what is wrong with it", async () => {
    const said = async (begin: string, end: string) => {
      const error = await refusal(report({ begin, end }));
      return { code: error.code, message: error.message };
    };
    expect(await said("1700086399", "1700000000")).toEqual({
      code: "invalid_date_range",
      message: "date_range from 1700086399 to 1700000000 ends before it begins",
    });
    expect(await said("1700000000", String(1700000000 + 32 * 86400))).toEqual({
      code: "invalid_date_range",
      message: "date_range from 1700000000 to 1702764800 spans more than 31 days",
    });
    expect(await said("1700000000", "253402300800")).toEqual({
      code: "invalid_date_range",
      message: "date_range from 1700000000 to 253402300800 lies past 9999-12-31T23:59:59Z",
    });
  });

  it("a range of years, and times past year 9999, are refused", async () => {
    expect((await refusal(report({ begin: "0", end: "1700000000" }))).code).toBe("invalid_date_range");
    expect((await refusal(report({ begin: "99999999999999999999", end: "99999999999999999999" }))).code).toBe(
      "invalid_date_range",
    );
  });

  it("an empty range (begin = end) and a week pass", async () => {
    await expect(parseReports(report({ begin: "1700000000", end: "1700000000" }))).resolves.toHaveLength(1);
    await expect(
      parseReports(report({ begin: "1700000000", end: String(1700000000 + 7 * 86400) })),
    ).resolves.toHaveLength(1);
  });
});

describe("counts", () => {
  it("counts summing past 2^53 are refused", async () => {
    const half = String(2 ** 52 - 1);
    const error = await refusal(report({ records: record(half) + record(half) }));
    expect(error.code).toBe("count_out_of_range");
  });

  it("one row over the per-report limit is refused; rows adding up past it too", async () => {
    expect((await refusal(report({ records: record(String(MAX_REPORT_MESSAGES + 1)) }))).code).toBe(
      "count_out_of_range",
    );
    const near = String(MAX_REPORT_MESSAGES / 2 + 1);
    const error = await refusal(report({ records: record(near) + record(near) }));
    expect(error.code).toBe("count_out_of_range");
    expect(error.message).toContain("row 2");
  });

  it("a report of exactly the limit passes", async () => {
    const half = String(MAX_REPORT_MESSAGES / 2);
    const [parsed] = await parseReports(report({ records: record(half) + record(half) }));
    if (parsed?.kind !== "aggregate") throw new Error("expected an aggregate report");
    expect(parsed.report.rows.reduce((sum, row) => sum + row.count, 0)).toBe(MAX_REPORT_MESSAGES);
  });
});

describe("text is never buffered past its cap", () => {
  it("an org_name longer than the field limit refuses the report, naming the field", async () => {
    const error = await refusal(report({ orgName: "a".repeat(MAX_FIELD_CHARS + 1) }));
    expect(error.code).toBe("field_too_long");
    expect(error.message).toContain("<org_name>");
  });

  it("a field at the limit passes", async () => {
    const [parsed] = await parseReports(report({ orgName: "a".repeat(MAX_FIELD_CHARS) }));
    if (parsed?.kind !== "aggregate") throw new Error("expected an aggregate report");
    expect(parsed.report.orgName).toHaveLength(MAX_FIELD_CHARS);
  });

  it("a long field inside a row (a DKIM selector in CDATA) refuses the report", async () => {
    const selector = `<dkim><domain>example.com</domain><selector><![CDATA[${"s".repeat(5000)}]]></selector><result>pass</result></dkim>`;
    expect((await refusal(report({ records: record("1", selector) }))).code).toBe("field_too_long");
  });

  it("field_too_long says which field: its elements, and its record", async () => {
    const said = async (input: Buffer) => {
      const error = await refusal(input);
      return { code: error.code, message: error.message };
    };
    const long = "d".repeat(MAX_FIELD_CHARS + 1);
    expect(await said(report({ orgName: long }))).toEqual({
      code: "field_too_long",
      message: "<report_metadata><org_name> is longer than 1024 characters",
    });
    expect(await said(report({ domain: long }))).toEqual({
      code: "field_too_long",
      message: "<policy_published><domain> is longer than 1024 characters",
    });
    const spf = `<spf><domain>${long}</domain><result>pass</result></spf>`;
    expect(await said(report({ records: record("1") + record("1", spf) }))).toEqual({
      code: "field_too_long",
      message: "<auth_results><spf><domain> of record 2 is longer than 1024 characters",
    });
  });

  it("CDATA between elements is no field: it is bounded as an XML node, not refused as a field", async () => {
    const cdata = `<![CDATA[${"c".repeat(MAX_FIELD_CHARS * 4)}]]>`;
    const [parsed] = await parseReports(report({ metadataExtra: cdata }));
    if (parsed?.kind !== "aggregate") throw new Error("expected an aggregate report");
    expect(parsed.report.orgName).toBe("x.org");
  });

  for (const [what, node] of [
    ["comment", `<!--${"c".repeat(MAX_XML_NODE_CHARS + 200_000)}-->`],
    ["text node in an unknown element", `<extra>${"t".repeat(MAX_XML_NODE_CHARS + 200_000)}</extra>`],
    ["attribute", `<extra a="${"v".repeat(MAX_XML_NODE_CHARS + 200_000)}"/>`],
  ] as const) {
    it(`a huge ${what} is refused before it is buffered whole, also when it arrives in one chunk`, async () => {
      const input = report({ metadataExtra: node });
      const error = await (async () => {
        // One chunk of the whole input: the reader must still look at it piece by piece.
        for await (const _ of readReports(
          (async function* () {
            yield input;
          })(),
        )) {
          /* drain */
        }
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReportParseError);
      expect((error as ReportParseError).code).toBe("xml_node_too_long");
    });
  }
});

function arfMail(feedbackFields: string, subject = "hello"): Buffer {
  return Buffer.from(
    [
      "From: dmarc@receiver.example",
      "To: reports@example.com",
      "Subject: failure report",
      "MIME-Version: 1.0",
      'Content-Type: multipart/report; report-type=feedback-report; boundary="b"',
      "",
      "--b",
      "Content-Type: text/plain",
      "",
      "A failure report.",
      "--b",
      "Content-Type: message/feedback-report",
      "",
      "Feedback-Type: auth-failure",
      "Version: 1",
      "Arrival-Date: Tue, 14 Nov 2023 22:13:20 +0000",
      "Source-IP: 192.0.2.1",
      feedbackFields,
      "--b",
      "Content-Type: text/rfc822-headers",
      "",
      "From: someone@example.com",
      `Subject: ${subject}`,
      "",
      "--b--",
      "",
    ].join("\r\n"),
  );
}

describe("failure reports", () => {
  it("a reported domain that is not a host name is refused", async () => {
    for (const domain of ["&dom;", "exa mple.com", "<b>x</b>"]) {
      const error = await refusal(arfMail(`Reported-Domain: ${domain}`));
      expect(error.code, domain).toBe("invalid_domain");
    }
  });

  it("incidents past the limit are refused", async () => {
    const error = await refusal(arfMail("Reported-Domain: example.com\r\nIncidents: 9007199254740993"));
    expect(error.code).toBe("count_out_of_range");
  });

  it("a valid report keeps its domain and a long Subject is cut, with a warning", async () => {
    const [parsed] = await parseReports(arfMail("Reported-Domain: Example.COM", "s".repeat(5000)));
    if (parsed?.kind !== "failure") throw new Error("expected a failure report");
    expect(parsed.report.reportedDomain).toBe("example.com");
    expect(parsed.report.subject).toHaveLength(1024);
    expect(parsed.report.warnings).toContain("Subject cut to 1024 characters");
  });
});

describe("rows", () => {
  it("a row holding more than 64 reasons and results refuses the report", async () => {
    const results = `<spf><domain>example.com</domain><result>pass</result></spf>`.repeat(70);
    expect((await refusal(report({ records: record("1", results) }))).code).toBe("too_many_results");
  });

  it("a gzip row bomb (many small rows) is read without leaking listeners", async () => {
    let records = "";
    for (let i = 0; i < 20_000; i++)
      records += record("1").replace("192.0.2.1", `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`);
    // Stored deflate blocks: many input chunks, each written while the inflater's output waits.
    const bomb = gzipSync(report({ records }), { level: 0 });
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const [parsed] = await parseReports(bomb);
      if (parsed?.kind !== "aggregate") throw new Error("expected an aggregate report");
      expect(parsed.report.rows).toHaveLength(20_000);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.map((warning) => warning.name)).not.toContain("MaxListenersExceededWarning");
  });
});

/** Issue 21: what is dropped is said, with the reason; what is kept never holds an entity's name. */
describe("dropped rows, entities and empty labels", () => {
  const outcome = async (input: Buffer) => {
    const error = await refusal(input);
    return { code: error.code, message: error.message };
  };
  const aggregate = async (input: Buffer) => {
    const [parsed] = await parseReports(input);
    if (parsed?.kind !== "aggregate") throw new Error("expected an aggregate report");
    return parsed.report;
  };
  const dtd = '<!DOCTYPE feedback [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>';

  it("rows dropped are counted by reason, with the first of each, and the rest stored", async () => {
    const parsed = await aggregate(
      report({
        records:
          record("-5") +
          record("2", "", "999.1.1.1") +
          record("3") +
          record("4", "", "") +
          record("x1") +
          record("5", "", "192.0.2.9", "&xxe;"),
        prolog: dtd,
      }),
    );
    expect(parsed.rows.map((row) => row.count)).toEqual([3]);
    expect(parsed.dropped).toEqual([
      { reason: "invalid_count", rows: 2, first: 'row 1: invalid count "-5"' },
      { reason: "invalid_source_ip", rows: 1, first: 'row 2: invalid source_ip "999.1.1.1"' },
      { reason: "missing_source_ip", rows: 1, first: "row 4: missing source_ip" },
      {
        reason: "unexpanded_entity",
        rows: 1,
        first: "row 6: <identifiers><header_from> holds an entity reference that is never expanded",
      },
    ]);
    expect(parsed.warnings).toContain('dropped row 1: invalid count "-5"');
  });

  it("a report with nothing dropped says so with an empty list", async () => {
    expect((await aggregate(report())).dropped).toEqual([]);
  });

  it("a report whose every row was dropped is refused, not stored with 0 rows", async () => {
    expect(await outcome(report({ records: record("-5") }))).toEqual({
      code: "no_valid_rows",
      message: 'every row of the report was dropped: invalid_count 1 (row 1: invalid count "-5")',
    });
    expect(await outcome(report({ records: record("1", "", "999.1.1.1") + record("2", "", "") }))).toEqual({
      code: "no_valid_rows",
      message:
        'every row of the report was dropped: invalid_source_ip 1 (row 1: invalid source_ip "999.1.1.1"), missing_source_ip 1 (row 2: missing source_ip)',
    });
  });

  it("an entity left unexpanded in the report's own fields refuses it, naming the field", async () => {
    expect(await outcome(report({ orgName: "&xxe;", prolog: dtd }))).toEqual({
      code: "unexpanded_entity",
      message:
        "<report_metadata><org_name> holds an entity reference (&xxe;) that is never expanded: DTDs are not read",
    });
    let laughs = '<!DOCTYPE feedback [<!ENTITY lol0 "lol">';
    for (let i = 1; i <= 9; i++) laughs += `<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`;
    expect(await outcome(report({ orgName: "Acme &lol9;", prolog: `${laughs}]>` }))).toEqual({
      code: "unexpanded_entity",
      message:
        "<report_metadata><org_name> holds an entity reference (&lol9;) that is never expanded: DTDs are not read",
    });
    // Without a DTD too: an entity XML does not define.
    expect(
      (
        await outcome(
          report({ metadataExtra: "<extra_contact_info>x</extra_contact_info>", orgName: "a&nbsp;b" }),
        )
      ).code,
    ).toBe("unexpanded_entity");
  });

  it("the five entities of XML and character references are text, not refused", async () => {
    const parsed = await aggregate(report({ orgName: "AT&amp;T &#x4D;ail &lt;x&gt;" }));
    expect(parsed.orgName).toBe("AT&T Mail <x>");
    expect(parsed.dropped).toEqual([]);
  });

  it("an organization name with an empty label is refused; one trailing dot is the root's", async () => {
    expect(await outcome(report({ orgName: "example.com.." }))).toEqual({
      code: "invalid_organization",
      message: 'org_name "example.com.." is not a name: it has an empty label',
    });
    expect((await outcome(report({ orgName: "mail..example.com" }))).code).toBe("invalid_organization");
    expect((await aggregate(report({ orgName: "Mail.Example.com." }))).organization).toBe("example.com");
  });

  it("a domain with an empty label is refused wherever a report names it", async () => {
    expect(await outcome(report({ domain: "example.com.." }))).toEqual({
      code: "invalid_domain",
      message: 'policy_published domain "example.com.." is not a host name',
    });
    expect(await outcome(arfMail("Reported-Domain: example.com.."))).toEqual({
      code: "invalid_domain",
      message: `failure report's domain "example.com.." is not a host name`,
    });
  });
});
