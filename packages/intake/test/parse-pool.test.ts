import { readFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { ReportParseError } from "@dmarc-ledger/dmarc-reports";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holdMaxBytes } from "../src/parse-input.js";
import { ParsePool, ParseWorkerFailedError } from "../src/parse-pool.js";
import { type PrepareRequest, prepareInput } from "../src/prepare.js";
import { corpus, filesUnder } from "./support/corpus-files.js";

const request = (bytes: Uint8Array): PrepareRequest => ({
  bytes,
  keepLimit: 256 * 1024 * 1024,
  parseOptions: undefined,
  maxHeldBytes: holdMaxBytes,
});

/**
 * A worker that loads, takes an input and never answers: it surely still holds the input when it
 * is ended. The real worker, given a small input, can answer before terminate() takes effect.
 */
const stuckWorker = () =>
  new Worker(
    "const { parentPort } = require('node:worker_threads'); parentPort.postMessage({ ready: true }); parentPort.on('message', () => {});",
    { eval: true },
  );

/** Fails the test soon, rather than at the test timeout, when a promise never settles. */
function withinTenSeconds<T>(promise: Promise<T>): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error("did not settle within 10 s")), 10_000),
    ),
  ]);
}

describe("parse workers", () => {
  const pool = new ParsePool(2);
  beforeAll(() => pool.warm());
  afterAll(() => pool.close());

  /** On a worker: the pool is warm, so it does not leave the input to the caller. */
  const onWorker = (on: ParsePool, bytes: Uint8Array) => {
    const prepared = on.prepare(request(bytes));
    if (!prepared) throw new Error("no parse worker was ready");
    return prepared;
  };

  it("give what this thread gives for every corpus input, refusals with their code and reason", async () => {
    const files = filesUnder(corpus);
    expect(files.length).toBeGreaterThan(20);
    let refused = 0;
    for (const file of files) {
      const bytes = new Uint8Array(readFileSync(file));
      const [here, there] = await Promise.all([prepareInput(request(bytes)), onWorker(pool, bytes)]);
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
    await onWorker(pool, bytes);
    expect(Buffer.from(bytes).equals(copy)).toBe(true);
  });

  it("say so when a worker fails, rather than an answer about the input", async () => {
    const closing = new ParsePool(1, stuckWorker);
    await closing.warm();
    const bytes = new Uint8Array(readFileSync(filesUnder(corpus)[0]!));
    const reasons: string[] = [];
    closing.onWorkerFailure((reason) => reasons.push(reason));
    const inFlightAndQueued = Promise.allSettled([onWorker(closing, bytes), onWorker(closing, bytes)]);
    await closing.close();
    const settled = await withinTenSeconds(inFlightAndQueued);
    expect(settled.map((result) => result.status)).toEqual(["rejected", "rejected"]);
    for (const result of settled)
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(ParseWorkerFailedError);
    // Stopped, not failed: nothing to tell a log.
    expect(reasons).toEqual([]);
  });

  it("tell of a worker that dies with an input", async () => {
    const dying = new ParsePool(1, stuckWorker);
    const reasons: string[] = [];
    dying.onWorkerFailure((reason) => reasons.push(reason));
    try {
      await dying.warm();
      const bytes = new Uint8Array(readFileSync(filesUnder(corpus)[0]!));
      // The worker ends while it has the input, as a crash would end it.
      const prepared = onWorker(dying, bytes);
      const [worker] = (dying as unknown as { workers: Set<Worker> }).workers;
      await worker!.terminate();
      await expect(withinTenSeconds(prepared)).rejects.toBeInstanceOf(ParseWorkerFailedError);
      expect(reasons).toEqual([expect.stringContaining("a parse worker failed with an input")]);
    } finally {
      await dying.close();
    }
  });

  it("leave inputs to the caller until one is ready, and start again after they were stopped", async () => {
    const fresh = new ParsePool(1);
    try {
      const bytes = new Uint8Array(readFileSync(filesUnder(corpus)[0]!));
      // Loading the parser takes a worker far longer than this synchronous call.
      expect(fresh.prepare(request(bytes))).toBeNull();
      await fresh.warm();
      const first = await onWorker(fresh, bytes);
      await fresh.close();
      expect(fresh.prepare(request(bytes))).toBeNull();
      await fresh.warm();
      expect((await onWorker(fresh, bytes)).sha256).toBe(first.sha256);
    } finally {
      await fresh.close();
    }
  });
});

describe("parse workers that cannot start", () => {
  it("are said to have failed, and after three in a row the caller parses every input", async () => {
    // A worker that exits before it says it is ready, as one that cannot load the parser would.
    const pool = new ParsePool(1, () => new Worker("process.exit(3)", { eval: true }));
    const reasons: string[] = [];
    const stopTelling = pool.onWorkerFailure((reason) => reasons.push(reason));
    const bytes = new Uint8Array(readFileSync(filesUnder(corpus)[0]!));
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        expect(pool.prepare(request(bytes))).toBeNull();
        await pool.warm();
      }
      expect(reasons).toHaveLength(3);
      expect(reasons.at(-1)).toContain("3 in a row: no more are started");
      stopTelling();
    } finally {
      await pool.close();
    }
  });
});
