import { once } from "node:events";
import { crc32, createInflateRaw } from "node:zlib";
import { ReportParseError } from "../errors.js";
import { type ByteSource, peek } from "../io/byte-source.js";
import type { Limits } from "../options.js";
import { OutputBudget } from "./output-budget.js";

/** Output chunks (16 KB each) held before the inflater is paused: bounds memory when the reader is slow. */
const QUEUE_HIGH_WATER = 8;
const FLAG_HCRC = 2;
const FLAG_EXTRA = 4;
const FLAG_NAME = 8;
const FLAG_COMMENT = 16;

function corrupt(message: string, cause?: unknown): ReportParseError {
  return new ReportParseError("corrupt_archive", `gzip data is corrupt: ${message}`, { cause });
}

/** Length of the RFC 1952 member header at the start of `head`. */
function gzipHeaderLength(head: Uint8Array): number {
  if (head.length < 10 || head[0] !== 0x1f || head[1] !== 0x8b || head[2] !== 8) throw corrupt("bad header");
  const flags = head[3]!;
  let offset = 10;
  if (flags & FLAG_EXTRA) offset += 2 + (head[offset]! | (head[offset + 1]! << 8));
  for (const flag of [FLAG_NAME, FLAG_COMMENT]) {
    if (!(flags & flag)) continue;
    while (offset < head.length && head[offset] !== 0) offset++;
    offset++;
  }
  if (flags & FLAG_HCRC) offset += 2;
  if (offset > head.length) throw corrupt("header longer than expected");
  return offset;
}

/**
 * Waits for a stream to drain, end or close. The listeners of the events that did not come are
 * removed: left behind, one per wait, they piled up past Node's limit of ten on a stream that
 * inflates many small rows (a MaxListenersExceededWarning, issue 14).
 */
async function drainedOrDone(stream: NodeJS.EventEmitter): Promise<void> {
  const waiting = new AbortController();
  const { signal } = waiting;
  try {
    await Promise.race([
      once(stream, "drain", { signal }),
      once(stream, "end", { signal }),
      once(stream, "close", { signal }),
    ]);
  } finally {
    waiting.abort();
  }
}

async function* prepend(first: Uint8Array, rest: AsyncIterator<Uint8Array>): ByteSource {
  if (first.length > 0) yield first;
  for (;;) {
    const next = await rest.next();
    if (next.done) return;
    yield next.value;
  }
}

/**
 * Streams the content of gzip data under the size and ratio limits, checked on every 16 KB zlib emits,
 * so a bomb is stopped before it fills memory. The member header and trailer are handled here and the
 * deflate body by zlib's raw inflater: zlib's own gunzip fails on bytes after the last member (Mimecast
 * appends a CRLF) and loses the output made so far; here such bytes are ignored with a note. CRC-32 and
 * length from the trailer are checked; concatenated members are read one after the other.
 */
export async function* gunzip(source: ByteSource, limits: Limits, notes: string[]): ByteSource {
  const budget = new OutputBudget(limits, "gzip data");
  let consumed = 0;
  let input = source;
  for (;;) {
    const { source: replay } = await peek(input, 4096);
    const iterator = replay[Symbol.asyncIterator]();
    const first = await iterator.next();
    if (first.done) return;
    const headerLength = gzipHeaderLength(first.value);
    consumed += headerLength;
    const member = yield* inflateMember(
      prepend(first.value.subarray(headerLength), iterator),
      budget,
      consumed,
    );
    consumed += member.bodyLength + 8;
    const afterBody = member.leftover;
    const trailer = await readExactly(afterBody, 8);
    if (trailer.bytes.length < 8) throw corrupt("trailer missing");
    const view = Buffer.from(trailer.bytes);
    if (view.readUInt32LE(0) !== member.crc >>> 0 || view.readUInt32LE(4) !== member.length % 2 ** 32) {
      throw corrupt("CRC or length mismatch");
    }
    const next = await peek(trailer.rest, 2);
    if (next.head.length === 0) return;
    if (next.head[0] === 0x1f && next.head[1] === 0x8b) {
      input = next.source;
      continue;
    }
    notes.push("ignored bytes after the end of the gzip data");
    return;
  }
}

async function readExactly(
  source: ByteSource,
  size: number,
): Promise<{ bytes: Uint8Array; rest: ByteSource }> {
  const { source: replay } = await peek(source, size);
  const iterator = replay[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) return { bytes: new Uint8Array(0), rest: prepend(new Uint8Array(0), iterator) };
  return { bytes: first.value.subarray(0, size), rest: prepend(first.value.subarray(size), iterator) };
}

interface MemberEnd {
  crc: number;
  length: number;
  /** Compressed bytes of the member's deflate body. */
  bodyLength: number;
  /** Bytes after the deflate body: the trailer, then whatever follows. */
  leftover: ByteSource;
}

/**
 * The ratio is judged on the input zlib has used for the output so far (`bytesWritten`, counted
 * before each output chunk is emitted), not on the input given to it: that depends on how the
 * input arrives (a file read whole is given at once, an upload a packet at a time), and one input
 * must get one answer whatever the channel.
 */
async function* inflateMember(
  body: ByteSource,
  budget: OutputBudget,
  usedBefore: number,
): AsyncGenerator<Uint8Array, MemberEnd> {
  const inflater = createInflateRaw();
  const queue: Buffer[] = [];
  // Input given to zlib and not yet used by it: after the body ends, its rest is the trailer.
  const fed: Uint8Array[] = [];
  let fedDropped = 0;
  const iterator = body[Symbol.asyncIterator]();
  let failure: unknown = null;
  let ended = false;
  let crc = 0;
  let length = 0;
  let wake: (() => void) | null = null;
  const signal = () => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  inflater.on("data", (chunk: Buffer) => {
    if (failure) return;
    try {
      budget.add(chunk.length, usedBefore + inflater.bytesWritten);
    } catch (error) {
      failure = error;
      inflater.destroy();
      signal();
      return;
    }
    queue.push(chunk);
    if (queue.length >= QUEUE_HIGH_WATER) inflater.pause();
    signal();
  });
  inflater.on("error", (error) => {
    failure ??= error;
    signal();
  });
  inflater.on("end", () => {
    ended = true;
    signal();
  });
  let stopFeeding = false;
  let handedOver = false;
  const feeding = (async () => {
    try {
      for (;;) {
        if (stopFeeding || failure || ended || inflater.destroyed) return;
        const next = await iterator.next();
        if (next.done) break;
        fed.push(next.value);
        if (!inflater.write(next.value)) await drainedOrDone(inflater);
        while (fed.length > 1 && fedDropped + fed[0]!.length <= inflater.bytesWritten) {
          fedDropped += fed.shift()!.length;
        }
      }
      if (!ended) inflater.end();
    } catch (error) {
      failure ??= error;
      signal();
    }
  })();

  try {
    for (;;) {
      const chunk = queue.shift();
      if (chunk) {
        if (queue.length < QUEUE_HIGH_WATER / 2 && inflater.isPaused()) inflater.resume();
        crc = crc32(chunk, crc);
        length += chunk.length;
        yield chunk;
        continue;
      }
      if (failure || ended) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    if (failure) {
      if (failure instanceof ReportParseError) throw failure;
      throw corrupt((failure as Error).message, failure);
    }
    stopFeeding = true;
    await feeding;
    // zlib counts in bytesWritten the input it used; the rest of what was fed belongs to the trailer.
    const all = Buffer.concat(fed);
    const leftover = all.subarray(inflater.bytesWritten - fedDropped);
    fed.length = 0;
    handedOver = true;
    return { crc, length, bodyLength: inflater.bytesWritten, leftover: prepend(leftover, iterator) };
  } finally {
    stopFeeding = true;
    inflater.destroy();
    // On an error or an early stop, close the source (a file stream, say) instead of leaving it open.
    if (!handedOver) iterator.return?.().catch(() => {});
  }
}
