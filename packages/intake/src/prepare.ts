import { type ParseOptions, ReportParseError, type ReportParseErrorCode } from "@dmarc-ledger/dmarc-reports";
import { bytesInput } from "./input-bytes.js";
import { type ParsedInput, parseInput } from "./parse-input.js";
import { hashAndCompress } from "./spool.js";

/** An input held in memory, to hash, compress and parse: what a parse worker is given. */
export interface PrepareRequest {
  bytes: Uint8Array;
  /** Inputs up to this size are compressed for the archive; larger ones are kept by hash only. */
  keepLimit: number;
  parseOptions: ParseOptions | undefined;
  maxHeldBytes: number;
}

/** What the archive and the store need of an input: its hash, its compressed bytes, what it holds. */
export interface PreparedInput {
  sha256: string;
  /** The bytes gzip-compressed (level 3), or null when the input is larger than the archive keeps. */
  compressed: Uint8Array | null;
  parsed: ParsedInput;
}

/** The CPU-bound work of receiving an input: all of it, so that a worker thread can do it. */
export async function prepareInput(request: PrepareRequest): Promise<PreparedInput> {
  const { bytes } = request;
  const { sha256, compressed } = hashAndCompress(bytes, request.keepLimit);
  const parsed = await parseInput(bytesInput(bytes), request.parseOptions, request.maxHeldBytes);
  return { sha256, compressed, parsed };
}

/** A refusal as it crosses threads: structured clone keeps an error's message, not its class. */
export interface ClonedRefusal {
  code: ReportParseErrorCode | null;
  message: string;
}

export function cloneRefusal(error: unknown): ClonedRefusal {
  return {
    code: error instanceof ReportParseError ? error.code : null,
    message: error instanceof Error ? error.message : String(error),
  };
}

export function reviveRefusal(refusal: ClonedRefusal): Error {
  return refusal.code ? new ReportParseError(refusal.code, refusal.message) : new Error(refusal.message);
}
