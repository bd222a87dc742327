import { Packet } from "dns2";
import { describe, expect, it } from "vitest";
import { publishTerms, type RegionSegment } from "../src/publish.js";

const verbatim = (terms: string[]): RegionSegment[] =>
  terms.map((term) => ({ kind: "verbatim", term, lookups: 0, voids: { 4: 0, 6: 0 } }));

const addresses = (count: number, third = 0) =>
  Array.from({ length: count }, (_, index) => `ip4:10.${third}.${Math.floor(index / 250)}.${index % 250}`);

/** The whole UDP answer to a TXT question for the record, with an EDNS(0) OPT, as dns2 writes it. */
function answerBytes(record: { name: string; strings: string[] }): number {
  const response = new Packet();
  response.header.qr = 1;
  response.header.aa = 1;
  response.questions.push({ name: record.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN } as never);
  response.answers.push({
    name: record.name,
    type: Packet.TYPE.TXT,
    class: Packet.CLASS.IN,
    ttl: 300,
    data: record.strings,
  } as never);
  response.additionals.push(Packet.Resource.EDNS([]) as never);
  return response.toBuffer().length;
}

describe("publishTerms", () => {
  it("sizes every record from its real answer, so long owner names still fit 512 bytes", () => {
    // 50 + 1 + 24 characters: the names that came back truncated were 36 characters or more.
    const rootName = `${"a".repeat(40)}.customer-with-a-long-name.example.spf.dmarc-ledger.example`;
    const { records } = publishTerms({ segments: verbatim(addresses(120)), fallthrough: "-", rootName });
    expect(records.length).toBeGreaterThan(3);
    for (const record of records) expect(answerBytes(record)).toBeLessThanOrEqual(512);
    // Filled close to the limit, not far below it.
    expect(Math.max(...records.map(answerBytes))).toBeGreaterThan(480);
  });

  it("names chained records after the set's content: a new set never reuses an old set's names", () => {
    const rootName = "example.com.spf.ledger.test";
    const first = publishTerms({ segments: verbatim(addresses(100)), fallthrough: "-", rootName });
    const again = publishTerms({ segments: verbatim(addresses(100)), fallthrough: "-", rootName });
    const changed = publishTerms({ segments: verbatim(addresses(100, 1)), fallthrough: "-", rootName });
    expect(first.records[0]!.name).toBe(rootName);
    expect(first.records[1]!.name).toMatch(/^_spf1-[0-9a-f]{8}\.example\.com\.spf\.ledger\.test$/);
    expect(again.records.map((record) => record.name)).toEqual(first.records.map((record) => record.name));
    const oldChained = new Set(first.records.slice(1).map((record) => record.name));
    for (const record of changed.records.slice(1)) expect(oldChained.has(record.name)).toBe(false);
    // Each record leads to the next by redirect=, the last ends with the closing all.
    first.records.slice(0, -1).forEach((record, index) => {
      expect(record.value.endsWith(` redirect=${first.records[index + 1]!.name}`)).toBe(true);
    });
    expect(first.records.at(-1)!.value.endsWith(" -all")).toBe(true);
  });
});
