import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeOnThreads } from "../../apps/cli/src/commands/import-threads.js";
import { aggregateReportXml } from "../support/report-xml.js";
import { type Backend, cli, pgliteBackend, postgresBackend } from "../support/service-harness.js";

const day = 86_400;
const begin = 1_780_000_000 - (1_780_000_000 % day);

/** Report `i`: its domain, receiver and rows vary with i; returns the XML and its messages. */
function report(i: number, reportId = `threads-${i}`): { xml: string; messages: number } {
  const rows = Array.from({ length: 1 + (i % 4) }, (_, j) => ({
    sourceIp: `192.0.2.${(i * 7 + j) % 250}`,
    count: ((i + j) % 9) + 1,
    dkim: j % 2 === 0 ? "pass" : "fail",
  }));
  return {
    xml: aggregateReportXml({
      reportId,
      domain: `threads-${i % 7}.example`,
      organization: `receiver-${i % 3}.example`,
      begin: begin + (i % 5) * day,
      end: begin + (i % 5) * day + day - 1,
      rows,
    }),
    messages: rows.reduce((sum, row) => sum + row.count, 0),
  };
}

/** A mail carrying `xml` as its attachment, as a receiver sends it. */
function reportMail(xml: string, id: string): string {
  return [
    `From reporter@example.net Mon Nov 23 10:00:00 2026`,
    "From: dmarc@receiver.example",
    "To: rua@ledger.test",
    `Subject: Report ${id}`,
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="part"',
    "",
    "--part",
    `Content-Type: application/xml; name="${id}.xml"`,
    "Content-Transfer-Encoding: base64",
    `Content-Disposition: attachment; filename="${id}.xml"`,
    "",
    Buffer.from(xml).toString("base64").replace(/.{76}/g, "$&\n"),
    "--part--",
    "",
    "",
  ].join("\n");
}

/** The messages per domain the read models count. */
async function messagesByDomain(runtime: Runtime): Promise<Record<string, number>> {
  const { rows } = await sql<{ domain: string; n: string }>`select domain, sum(volume)::text as n
    from agg_domain group by domain order by domain`.execute(runtime.db);
  return Object.fromEntries(rows.map((row) => [row.domain, Number(row.n)]));
}

/** The name each output line is about (the path before its first ": "), in the order printed. */
const namesOf = (out: string) =>
  out
    .split("\n")
    .filter((line) => line.startsWith("/"))
    .map((line) => line.slice(0, line.indexOf(": ")));

describe("an import on several threads", () => {
  let work: string;
  let single: Backend;
  let threaded: Backend;
  let expected = 0;
  let oneThread: { code: number; out: string; err: string };
  let twoThreads: { code: number; out: string; err: string };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "dl-import-threads-"));
    for (let i = 0; i < 180; i++) {
      const { xml, messages } = report(i);
      writeFileSync(join(work, `r-${String(i).padStart(3, "0")}.xml`), xml);
      expected += messages;
    }
    // One report twice, in files of different bytes: stored once, whichever thread gets it first.
    const twice = report(500, "threads-twice");
    writeFileSync(join(work, "twice-a.xml"), twice.xml);
    writeFileSync(join(work, "twice-b.xml"), `${twice.xml}\n`);
    expected += twice.messages;
    const inMbox = [report(600, "threads-mbox-1"), report(601, "threads-mbox-2")];
    writeFileSync(
      join(work, "m.mbox"),
      inMbox.map(({ xml }, i) => reportMail(xml, `threads-mbox-${i + 1}`)).join(""),
    );
    expected += inMbox.reduce((sum, { messages }) => sum + messages, 0);
    writeFileSync(join(work, "notes.txt"), "not a report\n");
    [single, threaded] = await Promise.all([postgresBackend(), postgresBackend()]);
    oneThread = await cli(single.env, "import", "--threads", "1", work);
    twoThreads = await cli(threaded.env, "import", "--threads", "2", work);
  });
  afterAll(async () => {
    await single?.cleanup();
    await threaded?.cleanup();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("stores and counts what one thread does, and exits 2 for the rejected input", async () => {
    expect(oneThread.code, oneThread.err).toBe(2);
    expect(twoThreads.code, twoThreads.err).toBe(2);
    const summary =
      "185 inputs read: 183 reports stored, 1 duplicates, 1 inputs rejected (kept with the reason).";
    expect(oneThread.out).toContain(summary);
    expect(twoThreads.out).toContain(summary);
    expect(twoThreads.err).toContain("notes.txt");
    const counted = await Promise.all(
      [single, threaded].map(async (backend) => {
        const runtime = await openRuntime(backend.env);
        try {
          return await messagesByDomain(runtime);
        } finally {
          await runtime.close();
        }
      }),
    );
    expect(Object.values(counted[1]!).reduce((sum, n) => sum + n, 0)).toBe(expected);
    expect(counted[1]).toEqual(counted[0]);
  });

  it("prints a line per report in the files' order, whichever thread stored it", () => {
    const names = namesOf(twoThreads.out);
    expect(names).toEqual(namesOf(oneThread.out));
    expect(names).toHaveLength(183 + 1);
    expect(names.filter((name) => name.includes("m.mbox#"))).toEqual([
      `${join(work, "m.mbox")}#1`,
      `${join(work, "m.mbox")}#2`,
    ]);
    const twice = twoThreads.out.split("\n").filter((line) => line.includes("/twice-"));
    expect(twice.filter((line) => line.endsWith("(stored)"))).toHaveLength(1);
    expect(twice.filter((line) => line.endsWith("(duplicate)"))).toHaveLength(1);
  });

  it("refuses threads on the embedded database, storing nothing", async () => {
    const embedded = await pgliteBackend();
    try {
      const result = await cli(embedded.env, "import", "--threads", "2", work);
      expect(result.code).toBe(1);
      expect(result.err).toContain("--threads needs PostgreSQL (DATABASE_URL)");
      expect(result.out).toBe("");
    } finally {
      await embedded.cleanup();
    }
  });

  it("throws what failed on a thread", async () => {
    const shown: string[] = [];
    const files = Array.from({ length: 100 }, (_, i) => ({
      path: join(work, `r-${String(i).padStart(3, "0")}.xml`),
      size: 1,
    }));
    await expect(
      storeOnThreads(
        files,
        2,
        // Nothing listens on port 9: each thread's runtime fails to open.
        { env: { DATABASE_URL: "postgres://postgres@127.0.0.1:9/none" }, parseThreads: 0, warm: false },
        { input: ({ name }) => shown.push(name), fileRead: () => {} },
        () => {},
      ),
    ).rejects.toThrow(/ECONNREFUSED|connect/);
    expect(shown).toEqual([]);
  });

  it("throws what failed on this thread, and hands the other threads no more files", async () => {
    const shown: string[] = [];
    const files = Array.from({ length: 100 }, (_, i) => ({
      path: join(work, `r-${String(i).padStart(3, "0")}.xml`),
      size: 1,
    }));
    let takenHere = 0;
    await expect(
      storeOnThreads(
        files,
        1,
        { env: { ...threaded.env }, parseThreads: 0, warm: false },
        { input: ({ name }) => shown.push(name), fileRead: () => {} },
        () => {},
        async (handed) => {
          for (const _file of handed) {
            takenHere++;
            throw new Error("this thread failed");
          }
        },
      ),
    ).rejects.toThrow("this thread failed");
    expect(takenHere).toBe(1);
    // The worker thread asked after the failure (its start takes longer): it was handed nothing.
    expect(shown).toEqual([]);
  });
});
