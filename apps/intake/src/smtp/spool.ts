import { randomUUID } from "node:crypto";
import { type FileHandle, open, rm } from "node:fs/promises";
import { join } from "node:path";
import { bytesInput, fileInput, type InputBytes } from "@dmarc-ledger/intake";

/** Enough of the message's start to read its header fields from; the rest goes to disk only. */
const HEADER_SNIFF_BYTES = 64 * 1024;

export interface SpooledMessage {
  /** The message: in memory up to inMemoryMaxBytes, in the spool file beyond. */
  input: InputBytes;
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
 * A message up to this size is held in memory: report mails are a few KiB, and a file of their
 * own cost each one an open, writes, a close, a read back and an unlink. At most this much per
 * connection (SMTP_MAX_CONNECTIONS bounds them); a larger message goes to the spool file.
 */
export const inMemoryMaxBytes = 256 * 1024;

/**
 * Receives a message's DATA as it arrives. Up to inMemoryMaxBytes it is held in memory; past that
 * it is written to a file of its own, so that memory holds one chunk per connection whatever the
 * message size. The file is not what makes the message durable (the event store is, before we
 * answer 250), so it is not synced; it lives until delivery returns. Past `maxBytes` nothing
 * more is kept: the rest is read and dropped (the client must be let finish before it can be
 * answered) and the file removed.
 */
export async function spoolMessage(
  data: AsyncIterable<Buffer>,
  spoolDir: string,
  maxBytes: number,
): Promise<SpooledMessage> {
  let file: FileHandle | null = null;
  let path: string | null = null;
  const discard = () => (path ? rm(path, { force: true }) : Promise.resolve());
  let bytes = 0;
  let oversized = false;
  const held: Buffer[] = [];
  /** The start of a message that went to the file, for its header fields. */
  let head: Buffer | null = null;
  try {
    for await (const chunk of data) {
      bytes += chunk.length;
      if (oversized) continue;
      if (bytes > maxBytes) {
        oversized = true;
        held.length = 0;
        continue;
      }
      if (!file && bytes <= inMemoryMaxBytes) {
        // smtp-server's chunks are slices of its socket buffers: copied, as they are kept.
        held.push(Buffer.from(chunk));
        continue;
      }
      if (!file) {
        path = join(spoolDir, `${randomUUID()}.eml`);
        file = await open(path, "wx", 0o600);
        for (const part of held) await file.write(part);
        head = Buffer.concat(held).subarray(0, HEADER_SNIFF_BYTES);
        held.length = 0;
      }
      await file.write(chunk);
    }
  } catch (error) {
    await file?.close();
    await discard();
    throw error;
  }
  await file?.close();
  if (oversized) {
    await discard();
    throw new MessageTooLargeError(maxBytes);
  }
  if (path !== null && head !== null)
    return { input: fileInput(path), bytes, messageId: messageIdOf(head), discard };
  const whole = Buffer.concat(held);
  return {
    input: bytesInput(new Uint8Array(whole.buffer, whole.byteOffset, whole.byteLength)),
    bytes,
    messageId: messageIdOf(whole.subarray(0, HEADER_SNIFF_BYTES)),
    discard,
  };
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
