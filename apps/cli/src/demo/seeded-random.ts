/** FNV-1a over the text's UTF-16 units: a 32-bit seed from words. */
export function hashSeed(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * mulberry32: a small PRNG whose sequence depends on its seed alone (Math.random cannot be
 * seeded), so that the demo's reports are the same bytes for the same seed.
 */
export class SeededRandom {
  private state: number;

  constructor(seed: string) {
    this.state = hashSeed(seed);
  }

  /** A number in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** A whole number in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** `digits` decimal digits, the first not 0. */
  digits(digits: number): string {
    let text = String(this.int(1, 9));
    while (text.length < digits) text += String(this.int(0, 9));
    return text;
  }

  hex(length: number): string {
    let text = "";
    while (text.length < length) text += this.int(0, 15).toString(16);
    return text;
  }
}
