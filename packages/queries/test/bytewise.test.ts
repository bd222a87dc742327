import { describe, expect, it } from "vitest";
import { bytewise } from "../src/sender-ranking-patch.js";

/** Characters from every range the fast path decides differently: ASCII, two- and three-byte, surrogate pairs, above them. */
const alphabet = [
  "a",
  "b",
  "z",
  "A",
  "-",
  ".",
  "é",
  "ÿ",
  "ā",
  "中",
  "\ud7ff",
  "\ue000",
  "\uffff",
  "😀",
  "𝔸",
  "\u{10ffff}",
];

function randomText(random: () => number): string {
  const length = Math.floor(random() * 5);
  return Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");
}

describe("bytewise", () => {
  it('orders text as its UTF-8 bytes (collate "C"), also across surrogates and prefixes', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    let differing = 0;
    for (let i = 0; i < 20_000; i++) {
      const a = randomText(random);
      const b = random() < 0.2 ? a + randomText(random) : randomText(random);
      const expected = Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));
      expect(bytewise(a, b), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(expected);
      if (expected !== Math.sign(a < b ? -1 : a > b ? 1 : 0)) differing++;
    }
    // The sample holds pairs where UTF-16 order differs from byte order (U+E000… against a surrogate pair).
    expect(differing).toBeGreaterThan(0);
  });
});
