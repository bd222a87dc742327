import { Readable } from "node:stream";
import { ReportParseError, type ReportParseErrorCode } from "../errors.js";

export type ByteSource = AsyncIterable<Uint8Array>;

export function toByteSource(
  input: AsyncIterable<Uint8Array> | NodeJS.ReadableStream | Uint8Array,
): ByteSource {
  if (input instanceof Uint8Array) return bytesSource(input);
  if (Symbol.asyncIterator in input) return toUint8Chunks(input as AsyncIterable<Uint8Array | string>);
  // Old-style streams (only "data"/"end" events) are wrapped into a modern Readable.
  return toUint8Chunks(new Readable().wrap(input));
}

async function* toUint8Chunks(input: AsyncIterable<Uint8Array | string>): ByteSource {
  for await (const chunk of input) yield typeof chunk === "string" ? Buffer.from(chunk) : chunk;
}

/** Yields a buffer in slices, so downstream parsers see the same chunking as from a file stream. */
export async function* bytesSource(bytes: Uint8Array, sliceSize = 64 * 1024): ByteSource {
  for (let offset = 0; offset < bytes.length; offset += sliceSize) {
    yield bytes.subarray(offset, Math.min(bytes.length, offset + sliceSize));
  }
}

/** Reads at least `size` bytes (or all there is) and returns them with a source that replays them first. */
export async function peek(
  source: ByteSource,
  size: number,
): Promise<{ head: Uint8Array; source: ByteSource }> {
  const iterator = source[Symbol.asyncIterator]();
  const taken: Uint8Array[] = [];
  let length = 0;
  let done = false;
  while (length < size) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    taken.push(next.value);
    length += next.value.length;
  }
  const head = Buffer.concat(taken);
  async function* replay(): ByteSource {
    if (head.length > 0) yield head;
    if (done) return;
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value;
      }
    } finally {
      await iterator.return?.();
    }
  }
  return { head, source: replay() };
}

/** Collects a whole source, refusing to hold more than `limit` bytes. */
export async function readAll(
  source: ByteSource,
  limit: number,
  what: string,
  code: ReportParseErrorCode = "decompressed_too_large",
): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of source) {
    length += chunk.length;
    if (length > limit) {
      throw new ReportParseError(code, `${what} is larger than the limit of ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, length);
}
