import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ReportParseError } from "@dmarc-ledger/dmarc-reports";
import { afterAll, describe, expect, it } from "vitest";
import { holdMaxBytes } from "../src/parse-input.js";
import { ParsePool, ParseWorkerFailedError } from "../src/parse-pool.js";
import { type PrepareRequest, prepareInput } from "../src/prepare.js";

const corpus = fileURLToPath(new URL("../../../../shared/corpus/dmarc/", import.meta.url));

function filesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? filesUnder(path) : [path];
    });
}

const request = (bytes: Uint8Array): PrepareRequest => ({
  bytes,
  keepLimit: 256 * 1024 * 1024,
  parseOptions: undefined,
  maxHeldBytes: holdMaxBytes,
});

describe("parse workers", () => {
  const pool = new ParsePool(2);
  afterAll(() => pool.close());

  it("give what this thread gives for every corpus input, refusals with their code and reason", async () => {
    const files = filesUnder(corpus);
    expect(files.length).toBeGreaterThan(20);
    let refused = 0;
    for (const file of files) {
      const bytes = new Uint8Array(readFileSync(file));
      const [here, there] = await Promise.all([prepareInput(request(bytes)), pool.prepare(request(bytes))]);
      expect({ file, sha256: there.sha256 }).toEqual({ file, sha256: here.sha256 });
      expect(Buffer.from(there.compressed!).equals(Buffer.from(here.compressed!))).toBe(true);
      if (here.parsed.kind === "refused") {
        refused++;
        const [mine, theirs] = [here.parsed.error, there.parsed.kind === "refused" && there.parsed.error];
        expect(theirs).toBeInstanceOf(mine instanceof ReportParseError ? ReportParseError : Error);
        expect({ file, error: theirs }).toMatchObject({ file, error: { message: (mine as Error).message } });
        if (mine instanceof ReportParseError) expect((theirs as ReportParseError).code).toBe(mine.code);
      } else {
        expect({ file, parsed: there.parsed }).toEqual({ file, parsed: here.parsed });
      }
    }
    // The corpus holds inputs that are not reports: the refusal's way across threads is tested too.
    expect(refused).toBeGreaterThan(0);
  });

  it("leave the caller's bytes whole", async () => {
    const bytes = new Uint8Array(readFileSync(filesUnder(corpus)[0]!));
    const copy = Buffer.from(bytes);
    await pool.prepare(request(bytes));
    expect(Buffer.from(bytes).equals(copy)).toBe(true);
  });

  it("say so when a worker fails, rather than an answer about the input", async () => {
    const closing = new ParsePool(1);
    const bytes = new Uint8Array(readFileSync(filesUnder(corpus)[0]!));
    const inFlightAndQueued = Promise.allSettled([
      closing.prepare(request(bytes)),
      closing.prepare(request(bytes)),
    ]);
    await closing.close();
    const settled = await inFlightAndQueued;
    expect(settled.map((result) => result.status)).toEqual(["rejected", "rejected"]);
    for (const result of settled)
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(ParseWorkerFailedError);
  });

  it("start ahead of the first input, and again after they were stopped", async () => {
    const warmed = new ParsePool(1);
    try {
      warmed.warm();
      const bytes = new Uint8Array(readFileSync(filesUnder(corpus)[0]!));
      const first = await warmed.prepare(request(bytes));
      await warmed.close();
      const again = await warmed.prepare(request(bytes));
      expect(again.sha256).toBe(first.sha256);
    } finally {
      await warmed.close();
    }
  });
});
