import { open } from "node:fs/promises";

const fromLine = Buffer.from("From ");

/**
 * An mbox file starts with a "From " separator line ("From sender date"); a mail file starts with
 * a header ("From:" has a colon, "From " never does in a header), XML with "<", gzip and zip
 * with their magic numbers.
 */
export function looksLikeMbox(head: Uint8Array): boolean {
  if (head.byteLength < 6) return false;
  const start = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  if (!start.subarray(0, 5).equals(fromLine)) return false;
  const lineEnd = start.indexOf(10);
  const first = start.subarray(0, lineEnd === -1 ? start.byteLength : lineEnd).toString("latin1");
  return /^From \S+/.test(first);
}

export async function fileLooksLikeMbox(path: string): Promise<boolean> {
  const handle = await open(path, "r");
  try {
    const head = Buffer.alloc(512);
    const { bytesRead } = await handle.read(head, 0, head.byteLength, 0);
    return looksLikeMbox(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

export interface MboxMessage {
  /** 1-based position in the file. */
  index: number;
  bytes: Buffer;
}

/**
 * Splits an mbox stream into its messages, one at a time (memory holds one message). A message
 * starts at a "From " line at the start of the file or after an empty line (mboxrd); body lines
 * quoted as ">From ", ">>From " lose one ">". The separator line itself and the empty line
 * before the next separator are not part of the message.
 */
export async function* splitMbox(source: AsyncIterable<Uint8Array>): AsyncGenerator<MboxMessage> {
  let pending = Buffer.alloc(0);
  let lines: Buffer[] = [];
  let index = 0;
  let inMessage = false;
  let previousEmpty = true;

  function* finishMessage(): Generator<MboxMessage> {
    if (!inMessage) return;
    // The empty line that separates messages belongs to the format, not to the message.
    const last = lines.at(-1);
    if (last && (last.byteLength === 1 || (last.byteLength === 2 && last[0] === 13))) lines.pop();
    yield { index, bytes: Buffer.concat(lines) };
    lines = [];
  }

  function* takeLine(line: Buffer): Generator<MboxMessage> {
    if (previousEmpty && line.subarray(0, 5).equals(fromLine)) {
      yield* finishMessage();
      index++;
      inMessage = true;
      previousEmpty = false;
      return;
    }
    const empty = line.byteLength === 1 || (line.byteLength === 2 && line[0] === 13);
    previousEmpty = empty;
    if (!inMessage) return;
    lines.push(isQuotedFrom(line) ? line.subarray(1) : line);
  }

  for await (const chunk of source) {
    pending = pending.byteLength === 0 ? Buffer.from(chunk) : Buffer.concat([pending, chunk]);
    let start = 0;
    for (let end = pending.indexOf(10, start); end !== -1; end = pending.indexOf(10, start)) {
      yield* takeLine(pending.subarray(start, end + 1));
      start = end + 1;
    }
    pending = Buffer.from(pending.subarray(start));
  }
  if (pending.byteLength > 0) yield* takeLine(pending);
  yield* finishMessage();
}

function isQuotedFrom(line: Buffer): boolean {
  let at = 0;
  while (at < line.byteLength && line[at] === 62 /* > */) at++;
  return at > 0 && line.subarray(at, at + 5).equals(fromLine);
}
