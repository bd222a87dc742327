import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseReports, ReportParseError, readReports } from "../src/index.js";

function reportXml(rows: number): string {
  let records = "";
  for (let i = 0; i < rows; i++) {
    records += `<record><row><source_ip>10.0.${(i >> 8) & 255}.${i & 255}</source_ip><count>1</count><policy_evaluated>
<disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row><identifiers><header_from>example.com</header_from>
</identifiers><auth_results><spf><domain>example.com</domain><result>pass</result></spf></auth_results></record>\n`;
  }
  return `<?xml version="1.0"?><feedback><version>1.0</version><report_metadata><org_name>x.org</org_name><email>a@x.org</email>
<report_id>r</report_id><date_range><begin>1700000000</begin><end>1700086399</end></date_range></report_metadata>
<policy_published><domain>example.com</domain></policy_published>${records}</feedback>`;
}

async function codeOf(input: Uint8Array): Promise<string> {
  const error = await parseReports(input).catch((e: unknown) => e);
  if (!(error instanceof ReportParseError))
    throw new Error(`expected a ReportParseError, got ${String(error)}`);
  return error.code;
}

describe("gzip", () => {
  const xml = Buffer.from(reportXml(3));

  it("concatenated gzip members are read as one stream", async () => {
    const half = Math.floor(xml.length / 2);
    const twoMembers = Buffer.concat([gzipSync(xml.subarray(0, half)), gzipSync(xml.subarray(half))]);
    const [parsed] = await parseReports(twoMembers);
    expect(parsed?.kind === "aggregate" && parsed.report.rows.length).toBe(3);
  });

  it("trailing bytes after the gzip data are ignored with a warning", async () => {
    const [parsed] = await parseReports(Buffer.concat([gzipSync(xml), Buffer.from("\r\n")]));
    if (parsed?.kind !== "aggregate") throw new Error("expected an aggregate report");
    expect(parsed.report.rows).toHaveLength(3);
    expect(parsed.report.warnings).toContain("ignored bytes after the end of the gzip data");
  });

  it("a wrong CRC or a truncated stream is corrupt_archive", async () => {
    const gz = gzipSync(xml);
    const badCrc = Buffer.from(gz);
    badCrc[badCrc.length - 8]! ^= 0xff;
    expect(await codeOf(badCrc)).toBe("corrupt_archive");
    expect(await codeOf(gz.subarray(0, gz.length - 20))).toBe("corrupt_archive");
  });

  it("gzip inside gzip", async () => {
    const [parsed] = await parseReports(gzipSync(gzipSync(xml)));
    expect(parsed?.kind === "aggregate" && parsed.report.rows.length).toBe(3);
  });
});

describe("streaming", () => {
  it("the first row batch comes out before the input has been read to its end", async () => {
    const gz = gzipSync(Buffer.from(reportXml(20_000)));
    let fed = 0;
    async function* slowSource() {
      for (let offset = 0; offset < gz.length; offset += 4096) {
        const chunk = gz.subarray(offset, offset + 4096);
        fed += chunk.length;
        yield chunk;
      }
    }
    let fedAtFirstBatch = -1;
    let rows = 0;
    for await (const item of readReports(slowSource(), { rowBatch: 100 })) {
      if (item.kind === "aggregate-rows") {
        if (fedAtFirstBatch < 0) fedAtFirstBatch = fed;
        expect(item.rows.length).toBeLessThanOrEqual(100);
        rows += item.rows.length;
      }
    }
    expect(rows).toBe(20_000);
    expect(fedAtFirstBatch).toBeGreaterThan(0);
    expect(fedAtFirstBatch).toBeLessThan(gz.length / 2);
  });
});
