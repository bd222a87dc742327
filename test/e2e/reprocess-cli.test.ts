import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { corpusDir } from "../support/corpus.js";
import { type Backend, backends, cli } from "../support/service-harness.js";

const niceGz = readFileSync(`${corpusDir}dmarc/parsedmarc/extract_report/nice-input.xml.gz`);

describe.each(backends)("dmarc-ledger reprocess on %s", (_name, makeBackend) => {
  let backend: Backend;
  let work: string;

  beforeAll(async () => {
    backend = await makeBackend();
    work = mkdtempSync(join(tmpdir(), "dl-reprocess-"));
    writeFileSync(join(work, "nice-input.xml.gz"), niceGz);
    writeFileSync(join(work, "empty.xml"), "");
  });
  afterAll(async () => {
    await backend?.cleanup();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("stores what parses after the fix, keeps the rest with its reason, and exits 2 while some is rejected", async () => {
    // A limit set too low (the gzip holds 15 KB of XML) rejects the report: the input is kept.
    const strict = { ...backend.env, MAX_DECOMPRESSED_BYTES: "1024" };
    const imported = await cli(strict, "import", work);
    expect(imported.code).toBe(2);
    expect(imported.out).toContain("Rejected: empty_input 1, decompressed_too_large 1.");

    expect((await cli(backend.env, "reprocess", "--since", "yesterday")).code).toBe(1);
    // Still too strict: nothing parses; the reasons are recorded again.
    const again = await cli(strict, "reprocess");
    expect(again.code).toBe(2);
    expect(again.out).toContain("2 inputs reprocessed: 0 now stored, 0 now duplicates, 2 still rejected");

    // The fix: the default limit. Reprocessing stores the report; the empty file stays rejected.
    const fixed = await cli(backend.env, "reprocess", "--since", "2020-01-01");
    expect(fixed.code).toBe(2);
    expect(fixed.out).toMatch(
      /\(import:nice-input\.xml\.gz\): rejected \(decompressed_too_large\) -> stored, 1 reports/,
    );
    expect(fixed.err).toMatch(
      /\(import:empty\.xml\): rejected \(empty_input\) -> still rejected \(empty_input\)/,
    );
    expect(fixed.out).toContain("2 inputs reprocessed: 1 now stored, 0 now duplicates, 1 still rejected");

    // Importing the report again finds it stored; only the empty file is left to reprocess.
    const reimported = await cli(backend.env, "import", join(work, "nice-input.xml.gz"));
    expect(reimported.code).toBe(0);
    expect(reimported.out).toContain("1 inputs read: 0 reports stored, 1 duplicates, 0 inputs rejected");
    const last = await cli(backend.env, "reprocess");
    expect(last.out).toContain("1 inputs reprocessed: 0 now stored, 0 now duplicates, 1 still rejected");
    const future = await cli(backend.env, "reprocess", "--since", "2999-01-01T00:00:00Z");
    expect(future).toMatchObject({ code: 0 });
    expect(future.out).toContain("0 inputs reprocessed");
  });
});
