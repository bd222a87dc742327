import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { sha256Hex } from "@dmarc-ledger/events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

/**
 * Issue 21, points 6 and 7: each case with its exact outcome, the same by import and by upload,
 * and said in the import's summary, the upload's 202, the archive's row and /metrics.
 */

const record = (ip: string, count: string) =>
  `<record><row><source_ip>${ip}</source_ip><count>${count}</count><policy_evaluated><disposition>none</disposition>` +
  "<dkim>pass</dkim><spf>pass</spf></policy_evaluated></row><identifiers><header_from>example.com</header_from>" +
  "</identifiers><auth_results/></record>";

function report(reportId: string, records: string, { orgName = "x.org", prolog = "" } = {}): Buffer {
  return Buffer.from(
    `<?xml version="1.0"?>${prolog}<feedback><report_metadata><org_name>${orgName}</org_name>` +
      `<email>a@x.org</email><report_id>${reportId}</report_id><date_range><begin>1700000000</begin>` +
      "<end>1700086399</end></date_range></report_metadata><policy_published><domain>example.com</domain>" +
      `<p>none</p></policy_published>${records}</feedback>`,
  );
}

const xxe = '<!DOCTYPE feedback [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>';
/** 128 MiB of tags that look like a report, about 128 KiB of gzip: a ratio near 1,000. */
const bomb = gzipSync(Buffer.from(`<feedback>${"<x/>".repeat(32 * 1024 * 1024 - 3)}`));
const maxDecompressedBytes = 16 * 1024 * 1024;

const inputs = {
  drops: report("drops", record("192.0.2.1", "-5") + record("999.1.1.1", "2") + record("192.0.2.3", "3")),
  onlyDropped: report("only-dropped", record("192.0.2.1", "-5")),
  entityOrg: report("entity-org", record("192.0.2.1", "1"), { orgName: "&xxe;", prolog: xxe }),
  emptyLabelOrg: report("empty-label-org", record("192.0.2.1", "1"), { orgName: "example.com.." }),
  bomb,
};

const dropped = [
  { reason: "invalid_count", rows: 1, first: 'row 1: invalid count "-5"' },
  { reason: "invalid_source_ip", rows: 1, first: 'row 2: invalid source_ip "999.1.1.1"' },
];

const refusals = {
  onlyDropped: {
    code: "no_valid_rows",
    reason: 'every row of the report was dropped: invalid_count 1 (row 1: invalid count "-5")',
  },
  entityOrg: {
    code: "unexpanded_entity",
    reason:
      "<report_metadata><org_name> holds an entity reference (&xxe;) that is never expanded: DTDs are not read",
  },
  emptyLabelOrg: {
    code: "invalid_organization",
    reason: 'org_name "example.com.." is not a name: it has an empty label',
  },
  // Read whole by import and a packet at a time by upload: one answer (it was decompressed_too_large by import).
  bomb: { code: "compression_ratio_exceeded", reason: "gzip data expands more than 250 times" },
};

describe("what became of each input, said the same way by every channel, on PostgreSQL", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let work: string;
  let key: string;
  const imported: Record<string, { code: number; out: string; err: string }> = {};

  beforeAll(async () => {
    backend = await postgresBackend();
    const env = { ...backend.env, MAX_DECOMPRESSED_BYTES: String(maxDecompressedBytes) };
    work = mkdtempSync(join(tmpdir(), "dl-outcomes-"));
    key = JSON.parse((await cli(env, "tenant", "create", "acme", "--json")).out).apiKey;
    for (const [name, bytes] of Object.entries(inputs)) {
      const path = join(work, name);
      writeFileSync(path, bytes);
      imported[name] = await cli(env, "import", path);
    }
    handle = await startTestService(env);
  });
  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const upload = async (body: Buffer) => {
    const response = await fetch(new URL("reports", handle.service.apiRoot), {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/octet-stream" },
      body,
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  it("import: the rows a report dropped, and why, on its line and in the summary", () => {
    const path = join(work, "drops");
    expect(imported.drops!.out.split("\n")).toEqual([
      `${path}: aggregate report for example.com, 1 rows, 3 messages (stored); 2 rows dropped: ` +
        'invalid_count 1 (row 1: invalid count "-5"), invalid_source_ip 1 (row 2: invalid source_ip "999.1.1.1")',
      "1 inputs read: 1 reports stored, 0 duplicates, 0 inputs rejected (kept with the reason).",
      "Rows dropped: 2 in 1 reports (stored without them): invalid_count 1, invalid_source_ip 1.",
      `  ${path}: invalid_count 1 (row 1: invalid count "-5"), invalid_source_ip 1 (row 2: invalid source_ip "999.1.1.1")`,
    ]);
    expect(imported.drops!.code).toBe(0);
  });

  it("import: each refusal with its exact code and reason, exit 2", () => {
    for (const [name, { code, reason }] of Object.entries(refusals)) {
      const sha = sha256Hex(inputs[name as keyof typeof inputs]).slice(0, 12);
      expect(imported[name]!.err, name).toBe(
        `${join(work, name)}: rejected (${code}): ${reason}; kept as rejected-input-${sha}…`,
      );
      expect(imported[name]!.out, name).toContain(`Rejected: ${code} 1.`);
      expect(imported[name]!.code, name).toBe(2);
    }
  });

  it("upload: the 202 says the rows dropped, in all and per report", async () => {
    // Another report id: the import's report is stored already, and this one must be new.
    const bytes = Buffer.from(
      inputs.drops.toString().replace("<report_id>drops<", "<report_id>drops-upload<"),
    );
    const answer = await upload(bytes);
    expect(answer.status).toBe(202);
    expect(answer.json).toMatchObject({ outcome: "stored", rowsDropped: 2 });
    expect(answer.json.items).toEqual([
      {
        kind: "aggregate",
        identity: expect.any(String),
        domain: "example.com",
        rows: 1,
        messages: 3,
        dropped,
        status: "stored",
      },
    ]);
    const metrics = await (await fetch(new URL("/metrics", handle.service.apiRoot))).text();
    expect(metrics).toMatch(/^intake_rows_dropped_total\{channel="upload",reason="invalid_count"\} 1$/m);
    expect(metrics).toMatch(/^intake_rows_dropped_total\{channel="upload",reason="invalid_source_ip"\} 1$/m);
  });

  it("upload: each refusal with the same code and reason as by import", async () => {
    for (const [name, { code, reason }] of Object.entries(refusals)) {
      const answer = await upload(inputs[name as keyof typeof inputs]);
      expect(answer, name).toEqual({
        status: 202,
        json: {
          status: "SUCCESS",
          sha256: sha256Hex(inputs[name as keyof typeof inputs]),
          bytes: inputs[name as keyof typeof inputs].length,
          archive: "seen",
          outcome: "rejected",
          rowsDropped: 0,
          items: [{ kind: "rejected", code, reason, status: "already_kept" }],
        },
      });
    }
  });

  it("the archive's row keeps the rows dropped and why", async () => {
    const rows = await handle.runtime.db
      .withTables<{ raw_input: { sha256: string; status: string; rows_dropped: string; dropped: string } }>()
      .selectFrom("raw_input")
      .select(["status", "rows_dropped", "dropped"])
      .where("sha256", "=", sha256Hex(inputs.drops))
      .execute();
    expect(
      rows.map((row) => ({
        ...row,
        rows_dropped: Number(row.rows_dropped),
        dropped: JSON.parse(row.dropped),
      })),
    ).toEqual([{ status: "stored", rows_dropped: 2, dropped }]);
  });
});
