import { gzipSync } from "node:zlib";
import { createPgliteDataDir, type TestDataDir } from "@dmarc-ledger/db/testing";
import { MAX_REPORT_MESSAGES } from "@dmarc-ledger/dmarc-reports";
import type { AggregateReportReceived, ReportRejected } from "@dmarc-ledger/events";
import { bytesInput, ingest, rowsPerChunk } from "@dmarc-ledger/intake";
import { catchUp } from "@dmarc-ledger/projection-engine";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Issue 14 through ingest(), on PGlite: a hostile report is refused with its reason and kept,
 * and none of it becomes a fact, also when it is refused after its first chunk's worth of rows.
 */

function row(i: number, count: string, results = ""): string {
  return `<record><row><source_ip>10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}</source_ip><count>${count}</count>
<policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row>
<identifiers><header_from>example.com</header_from></identifiers><auth_results>${results}</auth_results></record>`;
}

function report(id: string, records: string, domain = "example.com"): Buffer {
  return Buffer.from(`<?xml version="1.0"?><feedback><report_metadata><org_name>x.org</org_name>
<email>a@x.org</email><report_id>${id}</report_id><date_range><begin>1700000000</begin><end>1700086399</end>
</date_range></report_metadata><policy_published><domain>${domain}</domain><p>none</p></policy_published>
${records}</feedback>`);
}

describe("ingest() of hostile reports", () => {
  let runtime: Runtime;
  let data: TestDataDir;
  const options = { source: "test", metadata: { causedBy: "test" } };

  beforeAll(async () => {
    data = await createPgliteDataDir("dl-hostile-");
    runtime = await openRuntime(
      {},
      { database: { kind: "pglite", dataDir: data.dataDir }, eventStoreUrl: null },
    );
  });
  afterAll(async () => {
    await runtime?.close();
    data?.remove();
  });

  async function eventsOfType<T>(type: string): Promise<T[]> {
    const found: T[] = [];
    let from: "start" | bigint = "start";
    for (;;) {
      const page = await runtime.store.readAll(from, 100);
      if (page.length === 0) return found;
      for (const event of page) if (event.type === type) found.push(event.data as T);
      from = page.at(-1)!.position;
    }
  }

  // Held in memory after one parse (the usual case), and read again while stored (rows past holdMaxBytes).
  it.each([
    ["held after one parse", undefined],
    ["parsed again while stored", 64 * 1024],
  ])(
    "a report refused at its last row, past its first chunk, is kept and leaves no chunk behind (%s)",
    async (how, holdMaxBytes) => {
      let records = "";
      for (let i = 0; i < rowsPerChunk + 500; i++) records += row(i, "1");
      records += row(99_999, String(MAX_REPORT_MESSAGES));
      const outcome = await ingest(
        runtime.store,
        bytesInput(gzipSync(report(`late-refusal ${how}`, records))),
        { ...options, ...(holdMaxBytes ? { holdMaxBytes } : {}) },
      );
      expect(outcome.items).toEqual([
        expect.objectContaining({ kind: "rejected", code: "count_out_of_range", status: "kept" }),
      ]);
      expect(await eventsOfType<AggregateReportReceived>("AggregateReportReceived")).toEqual([]);
      const kept = (await eventsOfType<ReportRejected>("ReportRejected")).filter((event) =>
        Buffer.from(event.raw && "clear" in event.raw ? event.raw.clear.base64 : "", "base64").equals(
          gzipSync(report(`late-refusal ${how}`, records)),
        ),
      );
      expect(kept).toHaveLength(1);
      expect(kept[0]).toMatchObject({ code: "count_out_of_range" });
      expect(kept[0]!.reason).toContain(`more than ${MAX_REPORT_MESSAGES} messages`);
    },
  );

  it("refused domains never reach the read models; a valid report beside them does", async () => {
    const entity = report("entity", row(1, "5"), "&dom;")
      .toString()
      .replace(
        '<?xml version="1.0"?>',
        '<?xml version="1.0"?><!DOCTYPE feedback [<!ENTITY dom "example.org">]>',
      );
    for (const input of [Buffer.from(entity), report("surrogate", row(1, "5"), "a&#xDC00;.example.org")]) {
      const outcome = await ingest(runtime.store, bytesInput(input), options);
      expect(outcome.items).toEqual([expect.objectContaining({ kind: "rejected", code: "invalid_domain" })]);
    }
    const valid = await ingest(
      runtime.store,
      bytesInput(report("valid", row(1, "7"), "Example.NET")),
      options,
    );
    expect(valid.items).toEqual([
      expect.objectContaining({ kind: "aggregate", domain: "example.net", messages: 7 }),
    ]);
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    const domains = await runtime.db.selectFrom("report_domain").select("domain").execute();
    expect(domains.map((d) => d.domain)).toEqual(["example.net"]);
    const sums = await runtime.db.selectFrom("agg_domain").select(["domain", "volume"]).execute();
    expect(sums.map((s) => [s.domain, Number(s.volume)])).toEqual([["example.net", 7]]);
  });

  it("rows carrying many long results are chunked by size, not only by count", async () => {
    const result = `<dkim><domain>example.com</domain><selector>s</selector><result>fail</result><human_result>${"h".repeat(1000)}</human_result></dkim>`;
    let records = "";
    for (let i = 0; i < 150; i++) records += row(i, "1", result.repeat(40));
    const outcome = await ingest(runtime.store, bytesInput(report("wide-rows", records)), options);
    expect(outcome.items).toEqual([
      expect.objectContaining({ kind: "aggregate", rows: 150, status: "stored" }),
    ]);
    const chunks = (await eventsOfType<AggregateReportReceived>("AggregateReportReceived")).filter(
      (event) => event.reportId === "wide-rows",
    );
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(JSON.stringify(chunk).length).toBeLessThan(5 * 1024 * 1024);
    expect(chunks.reduce((sum, chunk) => sum + chunk.rows.length, 0)).toBe(150);
  });

  it("a mail over the mail limit is refused and kept with its reason", async () => {
    const mail = Buffer.concat([
      Buffer.from("From: a@example.com\r\nTo: b@example.com\r\nSubject: big\r\n\r\n"),
      Buffer.alloc(33 * 1024 * 1024, "x"),
    ]);
    const outcome = await ingest(runtime.store, bytesInput(mail), options);
    expect(outcome.items).toEqual([
      expect.objectContaining({ kind: "rejected", code: "mail_too_large", status: "kept" }),
    ]);
  });
});
