import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { type Database, migrateToLatest, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, openTestPglite, type TestDatabase } from "@dmarc-ledger/db/testing";
import { decodeGlobalPosition, type EventStore, openPostgresEventStore } from "@dmarc-ledger/event-store";
import { sha256Hex, streams } from "@dmarc-ledger/events";
import { type Kysely, sql } from "kysely";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsedmarcCorpus } from "../../../test/support/corpus.js";
import {
  bytesInput,
  type IntakeDeps,
  type IntakeSchema,
  intakeMigrations,
  type ReprocessedInput,
  receiveInput,
  reprocessArchived,
} from "../src/index.js";
import { createIntakeMetrics } from "../src/intake-metrics.js";

const corpus = parsedmarcCorpus;
const niceXml = readFileSync(`${corpus}extract_report/nice-input.xml`);
const niceGz = readFileSync(`${corpus}extract_report/nice-input.xml.gz`);
const niceZip = readFileSync(`${corpus}extract_report/nice-input.xml.zip`);
const metadata = { causedBy: "process:test" };

/** An aggregate report of the rows given as [source_ip, count]. */
function droppingReport(reportId: string, rows: [string, string][]): Buffer {
  const records = rows
    .map(
      ([ip, count]) => `<record><row><source_ip>${ip}</source_ip><count>${count}</count>
<policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row>
<identifiers><header_from>example.com</header_from></identifiers><auth_results/></record>`,
    )
    .join("");
  return Buffer.from(`<?xml version="1.0"?><feedback><report_metadata><org_name>x.org</org_name>
<email>a@x.org</email><report_id>${reportId}</report_id><date_range><begin>1700000000</begin>
<end>1700086399</end></date_range></report_metadata><policy_published><domain>example.com</domain>
<p>none</p></policy_published>${records}</feedback>`);
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

const backends: [string, () => Promise<{ database: Database; drop: () => Promise<void> }>][] = [
  ["PGlite", async () => ({ database: await openTestPglite(), drop: async () => {} })],
  [
    "PostgreSQL",
    async () => {
      const test: TestDatabase = await createTestDatabase("dl_intake");
      return { database: await openDatabase({ kind: "postgres", url: test.url }), drop: test.drop };
    },
  ],
];

describe.each(backends)("receiveInput and the raw archive on %s", (_name, open) => {
  let database: Database;
  let drop: () => Promise<void>;
  let store: EventStore;
  let deps: IntakeDeps;
  let db: Kysely<IntakeSchema>;

  beforeAll(async () => {
    ({ database, drop } = await open());
    await migrateToLatest(database.db, intakeMigrations);
    store = await openPostgresEventStore(database);
    db = database.withSchema<IntakeSchema>();
    deps = { store, db };
  });
  afterAll(async () => {
    await store?.close();
    await database?.close();
    await drop?.();
  });

  const row = (sha256: string) =>
    db.selectFrom("raw_input").selectAll().where("sha256", "=", sha256).executeTakeFirstOrThrow();

  it("archives the raw bytes compressed, by SHA-256, before recording what they held", async () => {
    const received = await receiveInput(deps, bytesInput(niceXml), {
      channel: "upload",
      source: "upload:req-1",
      metadata,
    });
    expect(received).toMatchObject({ sha256: sha256Hex(niceXml), archive: "new", status: "stored" });
    expect(received.items).toEqual([
      expect.objectContaining({ kind: "aggregate", status: "stored", domain: expect.any(String) }),
    ]);
    const archived = await row(received.sha256);
    expect(archived).toMatchObject({
      status: "stored",
      compression: "gzip",
      channel: "upload",
      reason: null,
    });
    expect(Number(archived.size)).toBe(niceXml.length);
    expect(archived.content!.byteLength).toBeLessThan(niceXml.length / 4);
    expect(gunzipSync(archived.content!).equals(niceXml)).toBe(true);
    expect(JSON.parse(archived.items)).toEqual(JSON.parse(JSON.stringify(received.items)));
  });

  it("counts the same bytes from another channel once, keeping each receipt", async () => {
    const again = await receiveInput(deps, bytesInput(niceXml), {
      channel: "import",
      source: "import:nice-input.xml",
      metadata,
    });
    expect(again).toMatchObject({ archive: "seen", status: "duplicate" });
    expect(again.items).toEqual([expect.objectContaining({ kind: "aggregate", status: "duplicate" })]);
    const archived = await row(again.sha256);
    // The bytes put the report there the first time: the archive keeps "stored".
    expect(archived.status).toBe("stored");
    expect(archived.times_received).toBe(2);
    expect(archived.channel).toBe("upload");
    expect(archived.last_seen.getTime()).toBeGreaterThanOrEqual(archived.first_seen.getTime());
    const receipts = await db
      .selectFrom("raw_input_receipt")
      .select(["channel", "source"])
      .where("sha256", "=", again.sha256)
      .orderBy("id")
      .execute();
    expect(receipts).toEqual([
      { channel: "upload", source: "upload:req-1" },
      { channel: "import", source: "import:nice-input.xml" },
    ]);
  });

  it("archives the gzip and zip forms of the same report as inputs of their own, with no new report", async () => {
    for (const bytes of [niceGz, niceZip]) {
      const received = await receiveInput(deps, bytesInput(bytes), {
        channel: "smtp",
        source: "smtp:x",
        metadata,
      });
      expect(received).toMatchObject({ archive: "new", status: "duplicate", sha256: sha256Hex(bytes) });
      expect((await row(received.sha256)).status).toBe("duplicate");
    }
  });

  it("keeps a rejected input with its reason, and reprocess stores it once it parses", async () => {
    // A gzip whose content exceeds a stricter decompression limit than the default: the same
    // parser and code path reject it; reprocessing with the default limits (the "fix") stores it.
    const changed = readFileSync(`${corpus}extract_report/changed-input.xml`);
    const { gzipSync } = await import("node:zlib");
    const gz = gzipSync(changed);
    const strict: IntakeDeps = { ...deps, parseOptions: { maxDecompressedBytes: 1000 } };
    const received = await receiveInput(strict, bytesInput(gz), {
      channel: "upload",
      source: "upload:r2",
      metadata,
    });
    expect(received.status).toBe("rejected");
    expect(received.items).toEqual([
      expect.objectContaining({ kind: "rejected", code: "decompressed_too_large" }),
    ]);
    const empty = await receiveInput(deps, bytesInput(new Uint8Array()), {
      channel: "upload",
      source: "upload:empty",
      metadata,
    });
    expect(empty.status).toBe("rejected");
    expect(await row(received.sha256)).toMatchObject({ status: "rejected", code: "decompressed_too_large" });

    // Still too strict: nothing changes but the reason is recorded again.
    const stillStrict = await collect(reprocessArchived(strict, { metadata }));
    expect(stillStrict.map((r) => r.after?.status)).toEqual(["rejected", "rejected"]);

    const redone: ReprocessedInput[] = await collect(reprocessArchived(deps, { metadata }));
    const bySha = new Map(redone.map((r) => [r.sha256, r]));
    expect(bySha.get(received.sha256)).toMatchObject({
      before: { status: "rejected", code: "decompressed_too_large" },
      after: { status: "stored", items: [expect.objectContaining({ kind: "aggregate", status: "stored" })] },
    });
    expect(bySha.get(empty.sha256)?.after?.status).toBe("rejected");
    expect(await row(received.sha256)).toMatchObject({ status: "stored", code: null, reason: null });
    expect(await row(empty.sha256)).toMatchObject({ status: "rejected", code: "empty_input" });
    const item = bySha.get(received.sha256)!.after!.items[0]!;
    const events = await store.readStream(streams.aggregateReport((item as { identity: string }).identity));
    expect(events.length).toBeGreaterThan(0);

    // Only the empty input is left to try; --since after its last receipt leaves nothing.
    expect((await collect(reprocessArchived(deps, { metadata }))).map((r) => r.sha256)).toEqual([
      empty.sha256,
    ]);
    expect(
      await collect(reprocessArchived(deps, { metadata, since: new Date(Date.now() + 60_000) })),
    ).toEqual([]);
  });

  it("takes the same new bytes from two channels at the same moment: one row, two receipts, one report", async () => {
    const twin = Buffer.from(
      niceXml
        .toString("utf8")
        .replace("<report_id>11038226378739404135</report_id>", "<report_id>twin-1</report_id>"),
    );
    const [smtp, imap] = await Promise.all([
      receiveInput(deps, bytesInput(twin), { channel: "smtp", source: "smtp:a", metadata }),
      receiveInput(deps, bytesInput(twin), { channel: "imap", source: "imap:b", metadata }),
    ]);
    expect([smtp.archive, imap.archive].sort()).toEqual(["new", "seen"]);
    expect([smtp.status, imap.status].sort()).toEqual(["duplicate", "stored"]);
    const archived = await row(smtp.sha256);
    expect(archived.times_received).toBe(2);
    expect(archived.status).toBe("stored");
    const receipts = await db
      .selectFrom("raw_input_receipt")
      .select("channel")
      .where("sha256", "=", smtp.sha256)
      .execute();
    expect(receipts.map((r) => r.channel).sort()).toEqual(["imap", "smtp"]);
  });

  it("commits a report's events and its archive row together, or neither", async () => {
    const report = Buffer.from(
      niceXml
        .toString("utf8")
        .replace("<report_id>11038226378739404135</report_id>", "<report_id>together-1</report_id>"),
    );
    // The archive refuses to record the outcome: the events appended before it must not stay.
    await sql`alter table raw_input add constraint outcome_refused check (status <> 'stored') not valid`.execute(
      database.db,
    );
    try {
      await expect(
        receiveInput(deps, bytesInput(report), { channel: "smtp", source: "smtp:t1", metadata }),
      ).rejects.toThrow(/outcome_refused/);
    } finally {
      await sql`alter table raw_input drop constraint outcome_refused`.execute(database.db);
    }
    expect(
      await db.selectFrom("raw_input").select("sha256").where("sha256", "=", sha256Hex(report)).execute(),
    ).toEqual([]);
    // Had the events committed alone, this retry would find a duplicate.
    const retried = await receiveInput(deps, bytesInput(report), {
      channel: "smtp",
      source: "smtp:t2",
      metadata,
    });
    expect(retried).toMatchObject({ archive: "new", status: "stored" });
    const identity = (retried.items[0] as { identity: string }).identity;
    expect(await store.readStream(streams.aggregateReport(identity))).toHaveLength(1);
  });

  it("commits inputs that arrive together in one transaction, and one input's failure stays its own", async () => {
    const report = (id: string) =>
      Buffer.from(
        niceXml
          .toString("utf8")
          .replace("<report_id>11038226378739404135</report_id>", `<report_id>${id}</report_id>`),
      );
    // Parsed on this thread, so that the inputs reach the commit group together (one parse worker
    // would hand them over one by one, each as its parse ends).
    const receive = (id: string) =>
      receiveInput({ ...deps, parseThreads: 0 }, bytesInput(report(`group-${id}`)), {
        channel: "smtp",
        source: `smtp:${id}`,
        metadata,
      });
    const together = await Promise.all(["t1", "t2", "t3", "t4", "t5"].map(receive));
    expect(together.map((received) => received.status)).toEqual(Array(5).fill("stored"));
    // Inputs that waited for a commit went into the next one together: their events share its id.
    const transactions = new Set(
      together.map((received) => decodeGlobalPosition(received.lastPosition!).transactionId),
    );
    expect(transactions.size).toBeLessThan(together.length);

    // The same bytes twice in one group: its writes are batched per group, one per stream and
    // row in a statement; the second copy finds the first's and is a duplicate, counted again.
    const twins = await Promise.all(["twin", "twin"].map(receive));
    expect(twins.map((received) => received.status).sort()).toEqual(["duplicate", "stored"]);
    expect((await row(twins[0]!.sha256)).times_received).toBe(2);
    const twinIdentity = (twins[0]!.items[0] as { identity: string }).identity;
    expect(await store.readStream(streams.aggregateReport(twinIdentity))).toHaveLength(1);

    await sql`alter table raw_input add constraint poison_refused check (source <> 'smtp:poison') not valid`.execute(
      database.db,
    );
    let results: PromiseSettledResult<Awaited<ReturnType<typeof receiveInput>>>[];
    try {
      results = await Promise.allSettled(["g1", "g2", "g3", "poison", "g4", "g5"].map(receive));
    } finally {
      await sql`alter table raw_input drop constraint poison_refused`.execute(database.db);
    }
    expect(results.map((result) => result.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
    ]);
    const stored = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    expect(stored.map((received) => received.status)).toEqual(Array(5).fill("stored"));
    for (const received of [...together, ...stored]) {
      const identity = (received.items[0] as { identity: string }).identity;
      expect(await store.readStream(streams.aggregateReport(identity))).toHaveLength(1);
      expect((await row(received.sha256)).status).toBe("stored");
    }
    // The refused input left nothing behind, and is stored when it comes again.
    const poison = report("group-poison");
    expect(
      await db.selectFrom("raw_input").select("sha256").where("sha256", "=", sha256Hex(poison)).execute(),
    ).toEqual([]);
    const again = await receiveInput(deps, bytesInput(poison), {
      channel: "smtp",
      source: "smtp:p2",
      metadata,
    });
    expect(again.status).toBe("stored");
  });

  it.each([
    ["parsed once, in one transaction with its archive row", undefined, 1],
    ["parsed again while stored, after its archive row", 64 * 1024, 3],
  ])("stores a report of several chunks: %s", async (how, holdMaxBytes, transactions) => {
    const records = Array.from(
      { length: 4500 },
      (_, i) =>
        `<record><row><source_ip>10.1.${i >> 8}.${i & 255}</source_ip><count>2</count><policy_evaluated>` +
        "<disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row>" +
        "<identifiers><header_from>example.com</header_from></identifiers><auth_results/></record>",
    ).join("");
    const xml = `<?xml version="1.0"?><feedback><report_metadata><org_name>x.org</org_name><email>a@x.org</email>
<report_id>chunks ${how}</report_id><date_range><begin>1700000000</begin><end>1700086399</end></date_range>
</report_metadata><policy_published><domain>example.com</domain><p>none</p></policy_published>${records}</feedback>`;
    const received = await receiveInput(
      { ...deps, ...(holdMaxBytes ? { holdMaxBytes } : {}) },
      bytesInput(Buffer.from(xml)),
      { channel: "import", source: `import:${how}`, metadata },
    );
    expect(received.items).toEqual([
      expect.objectContaining({ rows: 4500, messages: 9000, status: "stored" }),
    ]);
    const identity = (received.items[0] as { identity: string }).identity;
    const chunks = await store.readStream(streams.aggregateReport(identity));
    expect(chunks.map((chunk) => (chunk.data as { rows: unknown[] }).rows.length)).toEqual([2000, 2000, 500]);
    // Each append is its own transaction on the two-pass path; together with the archive otherwise.
    const ids = new Set(chunks.map((chunk) => decodeGlobalPosition(chunk.position).transactionId));
    expect(ids.size).toBe(transactions);
    expect((await row(received.sha256)).status).toBe("stored");
  });

  it("says which rows an input's report dropped and why: in its answer, its archive row and the metrics", async () => {
    const registry = new Registry();
    const metrics = createIntakeMetrics(registry);
    const xml = droppingReport("drops-1", [
      ["192.0.2.1", "-5"],
      ["999.1.1.1", "2"],
      ["192.0.2.3", "3"],
    ]);
    const received = await receiveInput({ ...deps, metrics }, bytesInput(xml), {
      channel: "upload",
      source: "upload:drops-1",
      metadata,
    });
    const dropped = [
      { reason: "invalid_count", rows: 1, first: 'row 1: invalid count "-5"' },
      { reason: "invalid_source_ip", rows: 1, first: 'row 2: invalid source_ip "999.1.1.1"' },
    ];
    expect(received.status).toBe("stored");
    expect(received.items).toEqual([
      expect.objectContaining({ kind: "aggregate", rows: 1, messages: 3, dropped, status: "stored" }),
    ]);
    expect(received.dropped).toEqual({ rows: 2, reasons: dropped });
    const archived = await row(received.sha256);
    expect({ rows: Number(archived.rows_dropped), reasons: JSON.parse(archived.dropped) }).toEqual({
      rows: 2,
      reasons: dropped,
    });
    const counted = (await metrics.rowsDropped.get()).values.map(({ labels, value }) => ({ labels, value }));
    expect(counted).toEqual([
      { labels: { channel: "upload", reason: "invalid_count" }, value: 1 },
      { labels: { channel: "upload", reason: "invalid_source_ip" }, value: 1 },
    ]);
    // The same bytes again: the answer says the same, the metric counted them once.
    const again = await receiveInput({ ...deps, metrics }, bytesInput(xml), {
      channel: "import",
      source: "import:drops-1.xml",
      metadata,
    });
    expect(again.dropped).toEqual({ rows: 2, reasons: dropped });
    expect((await metrics.rowsDropped.get()).values.reduce((sum, { value }) => sum + value, 0)).toBe(2);
  });

  it("refuses, and keeps with the reason, a report whose every row was dropped", async () => {
    const xml = droppingReport("drops-all", [["192.0.2.1", "-5"]]);
    const received = await receiveInput(deps, bytesInput(xml), {
      channel: "upload",
      source: "upload:drops-all",
      metadata,
    });
    const reason = 'every row of the report was dropped: invalid_count 1 (row 1: invalid count "-5")';
    expect(received.status).toBe("rejected");
    expect(received.items).toEqual([
      // The domain its policy names: the tenant that has it sees the refusal among its inputs.
      {
        kind: "rejected",
        code: "no_valid_rows",
        reason,
        sha256: sha256Hex(xml),
        status: "kept",
        domain: "example.com",
      },
    ]);
    expect(await row(received.sha256)).toMatchObject({
      status: "rejected",
      code: "no_valid_rows",
      reason,
    });
    expect(Number((await row(received.sha256)).rows_dropped)).toBe(0);
    expect(await store.readStream(streams.rejectedInput(sha256Hex(xml)))).toHaveLength(1);
  });

  it("records an input above the archive's limit by hash and outcome, without its bytes", async () => {
    const small: IntakeDeps = { ...deps, archiveMaxBytes: 1024 };
    const changed = readFileSync(`${corpus}extract_report/changed-input.xml`);
    const bigger = Buffer.concat([changed, Buffer.from("\n")]);
    const received = await receiveInput(small, bytesInput(bigger), {
      channel: "import",
      source: "import:big",
      metadata,
    });
    expect(received.status).toBe("duplicate");
    expect(await row(received.sha256)).toMatchObject({
      content: null,
      compression: null,
      status: "duplicate",
    });
  });
});
