import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { inMemoryMaxBytes, MessageTooLargeError, spoolMessage } from "../src/smtp/spool.js";

/** A message as smtp-server hands it over: in chunks of 64 KiB. */
async function* chunks(message: Buffer): AsyncIterable<Buffer> {
  for (let at = 0; at < message.length; at += 65_536) yield message.subarray(at, at + 65_536);
}

const message = (bodyBytes: number) =>
  Buffer.concat([
    Buffer.from("Message-ID: <spool-test@example.com>\r\nSubject: report\r\n\r\n"),
    Buffer.alloc(bodyBytes, "x"),
  ]);

describe("the SMTP spool", () => {
  const dir = mkdtempSync(join(tmpdir(), "dl-spool-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ["holds a small message in memory, no file", 4096, 0],
    ["writes a larger one to a file of its own, removed once delivered", inMemoryMaxBytes + 100_000, 1],
  ])("%s", async (_what, bodyBytes, files) => {
    const sent = message(bodyBytes);
    const spooled = await spoolMessage(chunks(sent), dir, 10 * 1024 * 1024);
    expect(readdirSync(dir)).toHaveLength(files);
    expect(spooled.bytes).toBe(sent.length);
    expect(spooled.messageId).toBe("<spool-test@example.com>");
    expect(Buffer.from(await spooled.input.readAll()).equals(sent)).toBe(true);
    await spooled.discard();
    expect(readdirSync(dir)).toEqual([]);
  });

  it.each([
    ["in memory", 1024],
    ["in a file", inMemoryMaxBytes + 1024],
  ])("refuses a message over the limit, and keeps nothing (limit %s)", async (_where, limit) => {
    await expect(spoolMessage(chunks(message(limit + 10)), dir, limit)).rejects.toBeInstanceOf(
      MessageTooLargeError,
    );
    expect(readdirSync(dir)).toEqual([]);
  });
});
