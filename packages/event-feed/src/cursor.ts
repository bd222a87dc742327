/**
 * The feed's cursor: opaque to consumers, a global position of the store inside (or the start).
 * A version prefix lets the shape change without breaking cursors held by consumers.
 */
const prefix = "v1:";

export class InvalidCursorError extends Error {
  override readonly name = "InvalidCursorError";
}

/** The cursor after `position`; null: before the first event. */
export function encodeCursor(position: bigint | null): string {
  return Buffer.from(`${prefix}${position === null ? "start" : position.toString()}`).toString("base64url");
}

export function decodeCursor(cursor: string): bigint | null {
  const text = /^[A-Za-z0-9_-]{1,80}$/.test(cursor) ? Buffer.from(cursor, "base64url").toString("utf8") : "";
  if (!text.startsWith(prefix)) throw new InvalidCursorError("not a cursor this feed gave");
  const value = text.slice(prefix.length);
  if (value === "start") return null;
  if (!/^(0|[1-9][0-9]{0,38})$/.test(value)) throw new InvalidCursorError("not a cursor this feed gave");
  return BigInt(value);
}
