import { TlsReportError } from "./errors.js";

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Refuses JSON nested deeper than `maxDepth` before it is parsed: one pass over the bytes,
 * outside strings. JSON.parse would build the whole tree first (a megabyte of `[` is a million
 * arrays), and the schema would then walk it.
 */
export function checkJsonDepth(bytes: Uint8Array, maxDepth: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
      continue;
    }
    if (byte === QUOTE) inString = true;
    else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > maxDepth) {
        throw new TlsReportError("nesting_too_deep", `the JSON is nested more than ${maxDepth} deep`);
      }
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth--;
  }
}
