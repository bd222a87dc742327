import type { RecordedEvent } from "@dmarc-ledger/event-store";
import {
  currentSchemaVersion,
  type DomainEvent,
  decodeEvent,
  type ForensicPersonalFields,
  type Personal,
} from "@dmarc-ledger/events";
import type { DataKeys, KeysHandle } from "@dmarc-ledger/personal-data";
import { shownForensicFields } from "@dmarc-ledger/queries";
import { encodeCursor } from "./cursor.js";
import type { FeedEventType, FeedPayloads } from "./feed-payloads.js";
import { reportDomainOf, unfedTypes } from "./membership.js";

/** One event in the CloudEvents 1.0 JSON format, with two extension attributes. */
export interface FeedEvent {
  specversion: "1.0";
  /** The event's id in the store: the same in every read and replay of it. */
  id: string;
  /** This region's API root. */
  source: string;
  type: FeedEventType;
  /** When the fact was learned (the writer's occurredAt), RFC 3339. */
  time: string;
  /** The report domain, the domain, or else the tenant's id. */
  subject: string;
  datacontenttype: "application/json";
  /** The schema version of `data`: the catalogue's current one (older events are upcast). */
  dataversion: number;
  /** The cursor after this event: `after=` it resumes right behind it. */
  cursor: string;
  data: FeedPayloads[FeedEventType];
}

export interface RenderOptions {
  source: string;
  tenantId: string;
  /** Opens sealed personal data; without, every sealed field reads as removed. */
  keys?: DataKeys | undefined;
  keysHandle: KeysHandle;
  /** The tenant's policy: redact as /forensic does. */
  redact: boolean;
}

/**
 * The events as the feed shows them: lifted to their current version, personal data shown as
 * /forensic shows it (never sealed), no secret. Events of types this version does not know, or
 * that are never fed, are left out.
 */
export async function toFeedEvents(
  recorded: readonly RecordedEvent[],
  options: RenderOptions,
): Promise<FeedEvent[]> {
  const decoded = recorded.flatMap((event) => {
    const domainEvent = decodeEvent(event);
    return domainEvent && !unfedTypes.has(domainEvent.type) ? [{ recorded: event, event: domainEvent }] : [];
  });
  const envelopes = decoded.flatMap(({ event }) =>
    event.type === "ForensicReportReceived" ? [event.data.personal as Personal<ForensicPersonalFields>] : [],
  );
  const opened = options.keys
    ? await options.keys.open(options.keysHandle, envelopes)
    : envelopes.map((envelope) => ("clear" in envelope ? envelope.clear : null));
  let nextOpened = 0;
  return decoded.map(({ recorded, event }) => {
    const fields = event.type === "ForensicReportReceived" ? (opened[nextOpened++] ?? null) : null;
    return {
      specversion: "1.0",
      id: recorded.id,
      source: options.source,
      type: event.type as FeedEventType,
      time:
        typeof event.metadata.occurredAt === "string"
          ? event.metadata.occurredAt
          : event.recordedAt.toISOString(),
      subject: subjectOf(event, options.tenantId),
      datacontenttype: "application/json",
      dataversion: currentSchemaVersion[event.type],
      cursor: encodeCursor(recorded.position),
      data: feedData(event, fields, options.redact),
    };
  });
}

function subjectOf(event: DomainEvent, tenantId: string): string {
  const reportDomain = reportDomainOf(event);
  if (reportDomain !== null) return reportDomain;
  const domain = (event.data as { domain?: unknown }).domain;
  return typeof domain === "string" ? domain : tenantId;
}

/** The payload without what the feed never carries: a key's hash, sealed personal data. */
function feedData(
  event: DomainEvent,
  fields: ForensicPersonalFields | null,
  redact: boolean,
): FeedPayloads[FeedEventType] {
  switch (event.type) {
    case "ApiKeyIssued": {
      const { keyHash: _hash, ...rest } = event.data;
      return rest;
    }
    case "ForensicReportReceived":
      return { ...event.data, personal: shownForensicFields(fields, redact) };
    default:
      return event.data as FeedPayloads[FeedEventType];
  }
}
