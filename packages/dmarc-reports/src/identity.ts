import { createHash } from "node:crypto";

/** Hex SHA-256 over the parts, length-prefixed so that no two part lists collide by concatenation. */
export function identityOf(parts: readonly (string | number | null)[]): string {
  const hash = createHash("sha256");
  for (const part of parts) {
    const text = part === null ? "\u0000null" : String(part);
    hash.update(`${text.length}:${text};`);
  }
  return hash.digest("hex");
}
