import type { NewEvent } from "./port.js";

/** Checks shared by every adapter, so that bad input fails the same way everywhere. */
export function assertAppendable(stream: string, events: readonly NewEvent[]): void {
  if (typeof stream !== "string" || stream.length === 0) {
    throw new TypeError("stream name must be a non-empty string");
  }
  // System streams and types belong to KurrentDB; refusing them everywhere keeps adapters equal.
  if (stream.startsWith("$")) throw new TypeError(`stream name must not start with "$": ${stream}`);
  // An empty append has no last event to report a position for.
  if (events.length === 0) throw new RangeError(`append to ${stream}: at least one event is required`);
  for (const event of events) {
    if (typeof event.type !== "string" || event.type.length === 0 || event.type.startsWith("$")) {
      throw new TypeError(`append to ${stream}: event type must be a non-empty string not starting with "$"`);
    }
  }
}

export function assertLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  }
}

/** Whether `actual` (null: no stream) satisfies `expected`. */
export function satisfiesExpected(expected: unknown, actual: bigint | null): boolean {
  switch (expected) {
    case "any":
      return true;
    case "no_stream":
      return actual === null;
    case "stream_exists":
      return actual !== null;
    default:
      if (typeof expected !== "bigint") throw new TypeError(`invalid expected revision: ${String(expected)}`);
      return actual === expected;
  }
}

/** The JSON text stored for a value: undefined (or anything JSON drops) becomes null. */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value) ?? "null";
}
