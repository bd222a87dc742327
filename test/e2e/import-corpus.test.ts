import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type ReportRejected, streams } from "@dmarc-ledger/events";
import { openDataKeys } from "@dmarc-ledger/personal-data";
import { openRuntime } from "@dmarc-ledger/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { corpusDir } from "../support/corpus.js";
import { type Backend, cli, postgresBackend } from "../support/service-harness.js";

const parsedmarc = join(corpusDir, "dmarc/parsedmarc");

function filesBelow(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesBelow(path) : [path];
  });
}

describe("dmarc-ledger import of the whole parsedmarc corpus", () => {
  let backend: Backend;
  let first: { code: number; out: string; err: string };

  beforeAll(async () => {
    backend = await postgresBackend();
    first = await cli(backend.env, "import", parsedmarc);
  });
  afterAll(async () => backend?.cleanup());

  it("accounts for every file: a report stored, or the input kept with the reason", () => {
    // 2: some input was rejected (and kept); the rest was stored.
    expect(first.code, first.err).toBe(2);
    const lines = [...first.out.split("\n"), ...first.err.split("\n")];
    for (const file of filesBelow(parsedmarc)) {
      expect(
        // A mail saved with an mbox "From " line is read as an mbox: its lines name file#1.
        lines.some((line) => line.startsWith(`${file}: `) || line.startsWith(`${file}#1: `)),
        file,
      ).toBe(true);
    }
    // The only junk below the directory is the empty file, and the corpus's LICENSE, which is
    // not a report either; everything else is a report (some are copies of one another).
    expect(first.err.split("\n").filter(Boolean)).toEqual([
      expect.stringMatching(/LICENSE: rejected \(not_a_report\): .*; kept as rejected-input-/),
      expect.stringMatching(/empty\.xml: rejected \(empty_input\): .*; kept as rejected-input-/),
    ]);
    expect(first.out).toMatch(/\d+ reports stored, \d+ duplicates, 2 inputs rejected/);
    // Mail, zip and gzip containers are read, not rejected.
    for (const name of [
      "twilight.eml",
      "mimecast-weird-gzip.eml",
      ".xml.zip",
      ".xml.gz",
      "Rent Reminder.eml",
    ]) {
      expect(first.out).toContain(name);
    }
  });

  it("keeps the rejected input's bytes and reason as an event", async () => {
    const runtime = await openRuntime(backend.env);
    try {
      const empty = readFileSync(join(parsedmarc, "empty.xml"));
      const sha = (await import("node:crypto")).createHash("sha256").update(empty).digest("hex");
      const [event] = await runtime.store.readStream(streams.rejectedInput(sha));
      expect(event?.type).toBe("ReportRejected");
      const data = event!.data as ReportRejected;
      expect(data).toMatchObject({ code: "empty_input", bytes: empty.length, source: "import:empty.xml" });
      // Sealed under the data key of nobody's data this month (docs/privacy.md): opened with it.
      expect(data.raw && "sealed" in data.raw).toBe(true);
      const keys = await openDataKeys(runtime.db, backend.env, null);
      const [opened] = await keys.open(runtime.db, [data.raw!]);
      expect(Buffer.from(opened!.base64, "base64").equals(empty)).toBe(true);
    } finally {
      await runtime.close();
    }
  });

  it("stores nothing twice when the same files come again", async () => {
    const again = await cli(backend.env, "import", parsedmarc);
    expect(again.code).toBe(2);
    const [, stored, duplicates] = /(\d+) reports stored, (\d+) duplicates/.exec(first.out)!;
    expect(again.out).toContain(
      `0 reports stored, ${Number(stored) + Number(duplicates)} duplicates, 2 inputs rejected`,
    );
    expect(again.err).toContain("already kept as rejected-input-");
    expect(again.err).not.toMatch(/; kept as/);
  });
});
