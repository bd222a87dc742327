import type { AllStreamResolvedEvent, ResolvedEvent } from "@kurrent/kurrentdb-client";
import type { EventMetadata, RecordedEvent } from "../port.js";
import { packPosition } from "./position.js";

/** KurrentDB's own streams and events ($-prefixed) are not part of our log. */
export function isSystem(streamId: string, type: string): boolean {
  return streamId.startsWith("$") || type.startsWith("$");
}

/**
 * A resolved event read from KurrentDB as ours; null for system events and for events without a
 * position (servers before 22.6 omit it on stream reads; we need 23+).
 */
export function toRecordedEvent(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | null {
  const event = resolved.event;
  if (!event || isSystem(event.streamId, event.type)) return null;
  if (!event.position) {
    throw new Error(`KurrentDB returned event ${event.id} without a position: the server is too old`);
  }
  const metadata = event.metadata;
  return {
    id: event.id,
    stream: event.streamId,
    type: event.type,
    revision: event.revision,
    position: packPosition(event.position),
    // Written as JSON events, so the client has parsed data already.
    data: event.data,
    metadata: isPlainObject(metadata) ? (metadata as EventMetadata) : {},
    recordedAt: event.created,
  };
}

function isPlainObject(value: unknown): boolean {
  return (
    typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}
