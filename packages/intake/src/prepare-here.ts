import {
  type ParseOptions,
  type ReportItem,
  ReportParseError,
  readReports,
} from "@dmarc-ledger/dmarc-reports";
import { bytesInput } from "./input-bytes.js";
import { rowBytes } from "./parse-input.js";
import type { PreparedInput, PrepareRequest } from "./prepare.js";
import { hashAndCompress } from "./spool.js";

/**
 * Bounds on the work of preparing an input on the calling thread (the event loop) instead of a
 * parse worker. Most reports are a few rows in a mail of a few KiB, parsed in under a millisecond:
 * sent to the worker, they waited behind the large report it was parsing (a 12 KiB mail can hold
 * 900 KiB of XML, 60 ms of parsing), and with them the SMTP replies of their connections. A
 * compressed input's size says nothing of its rows, so an input is tried here within these bounds
 * and handed to a worker as soon as it passes one; what was parsed here is then thrown away (about
 * 2 ms for 64 rows, at most about 15 ms for 256 KiB of XML that holds no row).
 */
export const hereLimits = {
  /** Larger inputs go to a worker at once. */
  inputBytes: 64 * 1024,
  /** Bytes one decompression layer may produce here (the parser's own limit is far larger). */
  decompressedBytes: 256 * 1024,
  /** Report rows parsed here; the parser hands them over in batches of this size. */
  rows: 64,
};

/**
 * Hashes, compresses and parses a small input here, as a parse worker would: the same result,
 * refusals included. null when the input passes a bound of hereLimits: a worker prepares it.
 */
export async function prepareHere(request: PrepareRequest): Promise<PreparedInput | null> {
  const { bytes } = request;
  if (bytes.byteLength > hereLimits.inputBytes) return null;
  const configured = request.parseOptions?.maxDecompressedBytes;
  const decompressedBytes = Math.min(configured ?? Number.POSITIVE_INFINITY, hereLimits.decompressedBytes);
  const options: ParseOptions = {
    ...request.parseOptions,
    maxDecompressedBytes: decompressedBytes,
    rowBatch: hereLimits.rows,
  };
  const items: ReportItem[] = [];
  let rows = 0;
  let heldBytes = 0;
  let refusal: unknown = null;
  try {
    for await (const item of readReports(bytesInput(bytes).open(), options)) {
      if (item.kind === "aggregate-rows") {
        rows += item.rows.length;
        if (rows > hereLimits.rows) return null;
        for (const row of item.rows) heldBytes += rowBytes(row);
      }
      items.push(item);
    }
  } catch (error) {
    // Our own lower bound, not the parser's: a worker parses it with the real one.
    const ownBound = decompressedBytes < (configured ?? Number.POSITIVE_INFINITY);
    if (ownBound && error instanceof ReportParseError && error.code === "decompressed_too_large") return null;
    refusal = error;
  }
  if (heldBytes > request.maxHeldBytes) return null;
  const { sha256, compressed } = hashAndCompress(bytes, request.keepLimit);
  return {
    sha256,
    compressed,
    parsed:
      refusal === null ? { kind: "held", items, bytes: heldBytes } : { kind: "refused", error: refusal },
  };
}
