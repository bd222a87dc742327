import type { EventMetadata, NewEvent, RecordedEvent } from "@dmarc-ledger/event-store";
import { currentSchemaVersion, type EventPayloads, type EventType } from "./catalogue.js";
import { upcast } from "./upcasters.js";

/** A recorded event whose type is in the catalogue, lifted to its current schema version. */
export type DomainEvent = {
  [K in EventType]: {
    type: K;
    data: EventPayloads[K];
    stream: string;
    revision: bigint;
    position: bigint;
    metadata: EventMetadata;
    recordedAt: Date;
  };
}[EventType];

export function newEvent<K extends EventType>(
  type: K,
  data: EventPayloads[K],
  metadata: EventMetadata,
): NewEvent {
  return {
    type,
    data,
    metadata: {
      ...metadata,
      schemaVersion: currentSchemaVersion[type],
      occurredAt: metadata.occurredAt ?? new Date().toISOString(),
    },
  };
}

function isEventType(type: string): type is EventType {
  return Object.hasOwn(currentSchemaVersion, type);
}

/**
 * Reads a recorded event as a DomainEvent. Events of types this version does not know (written by
 * a newer version, or by another tool into the same store) are returned as null and skipped.
 */
export function decodeEvent(recorded: RecordedEvent): DomainEvent | null {
  if (!isEventType(recorded.type)) return null;
  const version = typeof recorded.metadata.schemaVersion === "number" ? recorded.metadata.schemaVersion : 1;
  const data = upcast(recorded.type, version, recorded.data);
  return {
    type: recorded.type,
    data,
    stream: recorded.stream,
    revision: recorded.revision,
    position: recorded.position,
    metadata: recorded.metadata,
    recordedAt: recorded.recordedAt,
  } as DomainEvent;
}
