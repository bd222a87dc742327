import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import type { ParseOptions } from "@dmarc-ledger/dmarc-reports";
import { ReportParseError } from "@dmarc-ledger/dmarc-reports";
import { describe, expect, it } from "vitest";
import { holdMaxBytes } from "../src/parse-input.js";
import { type PreparedInput, type PrepareRequest, prepareInput } from "../src/prepare.js";
import { hereLimits, prepareHere } from "../src/prepare-here.js";
import { corpus, filesUnder } from "./support/corpus-files.js";

const request = (
  bytes: Uint8Array,
  parseOptions?: ParseOptions,
  maxHeldBytes = holdMaxBytes,
): PrepareRequest => ({ bytes, keepLimit: 256 * 1024 * 1024, parseOptions, maxHeldBytes });

/** An aggregate report of `rows` rows; `padding` bytes of XML comment before its first record. */
function reportXml(rows: number, padding = 0): Buffer {
  const records = Array.from(
    { length: rows },
    (_, i) =>
      `<record><row><source_ip>192.0.2.${i % 250}</source_ip><count>${i + 1}</count><policy_evaluated>` +
      "<disposition>none</disposition><dkim>pass</dkim><spf>fail</spf></policy_evaluated></row>" +
      "<identifiers><header_from>example.com</header_from></identifiers><auth_results>" +
      "<dkim><domain>example.com</domain><result>pass</result></dkim></auth_results></record>",
  ).join("");
  return Buffer.from(
    `<?xml version="1.0"?><feedback><report_metadata><org_name>here.example</org_name>` +
      `<email>r@here.example</email><report_id>here-${rows}-${padding}</report_id><date_range>` +
      "<begin>1700000000</begin><end>1700086399</end></date_range></report_metadata><policy_published>" +
      "<domain>example.com</domain><p>none</p></policy_published>" +
      `<!--${" ".repeat(padding)}-->${records}</feedback>`,
  );
}

/** What prepareInput (a worker's work) gives, compared field by field; refusals by code and reason. */
function expectSameAsWorker(here: PreparedInput, worker: PreparedInput, label: string): void {
  expect({ label, sha256: here.sha256 }).toEqual({ label, sha256: worker.sha256 });
  expect(Buffer.from(here.compressed!).equals(Buffer.from(worker.compressed!))).toBe(true);
  if (worker.parsed.kind === "refused") {
    expect(here.parsed.kind, label).toBe("refused");
    const [mine, theirs] = [here.parsed.kind === "refused" && here.parsed.error, worker.parsed.error];
    expect({ label, message: (mine as Error).message }).toEqual({
      label,
      message: (theirs as Error).message,
    });
    if (theirs instanceof ReportParseError) expect((mine as ReportParseError).code).toBe(theirs.code);
  } else {
    expect({ label, parsed: here.parsed }).toEqual({ label, parsed: worker.parsed });
  }
}

describe("preparing a small input on the calling thread", () => {
  it("gives what a worker gives for every corpus input it takes, and leaves the large one to a worker", async () => {
    const files = filesUnder(corpus);
    let taken = 0;
    let left = 0;
    for (const file of files) {
      const bytes = new Uint8Array(readFileSync(file));
      const here = await prepareHere(request(bytes));
      if (here === null) {
        left++;
        continue;
      }
      taken++;
      expectSameAsWorker(here, await prepareInput(request(bytes)), file);
    }
    // Every corpus input is a few KiB but one: 2,286 rows in 900 KiB of XML (8.8 KiB gzipped).
    expect(taken).toBeGreaterThan(20);
    expect(left).toBeGreaterThanOrEqual(1);
    const large = filesUnder(corpus).find((file) => file.includes("!large-example.com!"))!;
    expect(await prepareHere(request(gzipSync(readFileSync(large))))).toBeNull();
  });

  it("takes a report of as many rows as its bound, and leaves one more to a worker", async () => {
    const atBound = gzipSync(reportXml(hereLimits.rows));
    const here = await prepareHere(request(atBound));
    expect(here?.parsed.kind).toBe("held");
    expectSameAsWorker(here!, await prepareInput(request(atBound)), "at the bound");

    const past = gzipSync(reportXml(hereLimits.rows + 1));
    expect(past.byteLength).toBeLessThan(hereLimits.inputBytes);
    expect(await prepareHere(request(past))).toBeNull();
    expect((await prepareInput(request(past))).parsed.kind).toBe("held");
  });

  it("leaves a larger input to a worker without parsing it", async () => {
    const large = reportXml(1, hereLimits.inputBytes);
    expect(large.byteLength).toBeGreaterThan(hereLimits.inputBytes);
    expect(await prepareHere(request(large))).toBeNull();
    expect((await prepareInput(request(large))).parsed.kind).toBe("held");
  });

  it("leaves to a worker a small input that decompresses past its bound, which the parser takes", async () => {
    // One row behind 300 KiB of comment: 0.3 KiB gzipped.
    const padded = gzipSync(reportXml(1, 300 * 1024));
    expect(padded.byteLength).toBeLessThan(4096);
    expect(await prepareHere(request(padded))).toBeNull();
    expect((await prepareInput(request(padded))).parsed.kind).toBe("held");
  });

  it("refuses here what the parser's own, lower decompression limit refuses", async () => {
    const padded = gzipSync(reportXml(1, 150 * 1024));
    const options = { maxDecompressedBytes: 100 * 1024 };
    const here = await prepareHere(request(padded, options));
    expect(here?.parsed.kind).toBe("refused");
    expectSameAsWorker(here!, await prepareInput(request(padded, options)), "own limit");
  });

  it("leaves to a worker rows past the held bound, which the worker reads again while storing", async () => {
    const small = gzipSync(reportXml(3));
    expect(await prepareHere(request(small, undefined, 100))).toBeNull();
    expect((await prepareInput(request(small, undefined, 100))).parsed.kind).toBe("large");
  });
});
