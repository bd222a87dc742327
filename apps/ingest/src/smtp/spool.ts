import { randomUUID } from "node:crypto";
import { open, rm } from "node:fs/promises";
import { join } from "node:path";

/** Enough of the message's start to read its header fields from; the rest goes to disk only. */
const HEADER_SNIFF_BYTES = 64 * 1024;

export interface SpooledMessage {
  path: string;
  bytes: number;
  /** The Message-ID header field's value, if the header block carried one. */
  messageId: string | null;
  discard(): Promise<void>;
}

export class MessageTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`message exceeds ${limit} bytes`);
    this.name = "MessageTooLargeError";
  }
}

/**
 * Writes a message's DATA to a file of its own as it arrives, so that memory holds one chunk per
 * connection whatever the message size. The file is not what makes the message durable (the
 * event store is, before we answer 250), so it is not synced; it lives until delivery returns. Past `maxBytes` nothing more is written: the rest is read
 * and dropped (the client must be let finish before it can be answered) and the file removed.
 */
export async function spoolMessage(
  data: AsyncIterable<Buffer>,
  spoolDir: string,
  maxBytes: number,
): Promise<SpooledMessage> {
  const path = join(spoolDir, `${randomUUID()}.eml`);
  const file = await open(path, "wx", 0o600);
  const discard = () => rm(path, { force: true });
  let bytes = 0;
  let oversized = false;
  const head: Buffer[] = [];
  let headBytes = 0;
  try {
    for await (const chunk of data) {
      bytes += chunk.length;
      if (oversized) continue;
      if (bytes > maxBytes) {
        oversized = true;
        continue;
      }
      if (headBytes < HEADER_SNIFF_BYTES) {
        const part = chunk.subarray(0, HEADER_SNIFF_BYTES - headBytes);
        head.push(Buffer.from(part));
        headBytes += part.length;
      }
      await file.write(chunk);
    }
  } catch (error) {
    await file.close();
    await discard();
    throw error;
  }
  await file.close();
  if (oversized) {
    await discard();
    throw new MessageTooLargeError(maxBytes);
  }
  return { path, bytes, messageId: messageIdOf(Buffer.concat(head)), discard };
}

/** The Message-ID of a header block, unfolded, with angle brackets and without control characters. */
export function messageIdOf(head: Buffer): string | null {
  const text = head.toString("latin1");
  const end = text.search(/\r?\n\r?\n/);
  const headerBlock = (end === -1 ? text : text.slice(0, end)).replace(/\r?\n[ \t]+/g, " ");
  const match = /^message-id:[ \t]*(.*)$/im.exec(headerBlock);
  if (!match) return null;
  const value = match[1]!.replace(/[^\x21-\x7e]/g, "").slice(0, 250);
  return value === "" ? null : value;
}
