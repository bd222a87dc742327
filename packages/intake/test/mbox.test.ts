import { describe, expect, it } from "vitest";
import { looksLikeMbox, splitMbox } from "../src/index.js";

async function split(text: string, chunkSize: number): Promise<string[]> {
  const bytes = Buffer.from(text);
  async function* chunks() {
    for (let at = 0; at < bytes.byteLength; at += chunkSize) yield bytes.subarray(at, at + chunkSize);
  }
  const messages: string[] = [];
  for await (const message of splitMbox(chunks())) messages.push(message.bytes.toString());
  return messages;
}

const mbox = [
  "From reporter@example.net Mon Nov 23 10:00:00 2026",
  "Subject: one",
  "",
  "body of one",
  ">From the start of a body line",
  ">>From quoted twice",
  "From inside a paragraph stays",
  "",
  "From other@example.org Mon Nov 23 11:00:00 2026",
  "Subject: two",
  "",
  "body of two",
  "",
].join("\n");

describe("mbox", () => {
  it("is told apart from a mail, XML and gzip by its first line", () => {
    expect(looksLikeMbox(Buffer.from(mbox))).toBe(true);
    expect(looksLikeMbox(Buffer.from("From: someone@example.com\nSubject: x\n"))).toBe(false);
    expect(looksLikeMbox(Buffer.from("<?xml version='1.0'?><feedback/>"))).toBe(false);
    expect(looksLikeMbox(Buffer.from([0x1f, 0x8b, 8, 0, 0, 0]))).toBe(false);
  });

  it.each([1, 7, 4096])("splits on From lines and unquotes >From (read %i bytes at a time)", async (size) => {
    expect(await split(mbox, size)).toEqual([
      "Subject: one\n\nbody of one\nFrom the start of a body line\n>From quoted twice\nFrom inside a paragraph stays\n",
      "Subject: two\n\nbody of two\n",
    ]);
  });

  it("keeps CRLF line ends and a last message without a final newline", async () => {
    const crlf = "From a@b Mon\r\nSubject: x\r\n\r\nbody\r\n\r\nFrom c@d Tue\r\nSubject: y\r\n\r\nend";
    expect(await split(crlf, 3)).toEqual(["Subject: x\r\n\r\nbody\r\n", "Subject: y\r\n\r\nend"]);
  });
});
