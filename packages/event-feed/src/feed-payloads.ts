import type { ApiKeyIssued, EventPayloads, EventType, ForensicReportReceived } from "@dmarc-ledger/events";

/**
 * The event types that are never in a feed (membership.ts says why). A list the types are
 * derived from, so that the feed's payload types and the JSON Schemas follow the catalogue.
 */
export const unfedTypeList = [
  "UserCreated",
  "UserErased",
  "SourceIpResolved",
  "ReportRejected",
  "RetentionRun",
] as const;

export type FeedEventType = Exclude<EventType, (typeof unfedTypeList)[number]>;

/** What /forensic shows of a failure report's personal fields, by the tenant's policy. */
export interface ShownForensicFields {
  /** `(removed)` when redaction is on, or when the data key was shredded (retention, erasure). */
  subject: string;
  /** With redaction on: without the Subject field, every address's local part masked. */
  headers: string;
}

/** A failure report as the feed carries it: its personal fields shown, never sealed. */
export interface FeedForensicReportReceived extends Omit<ForensicReportReceived, "personal"> {
  personal: ShownForensicFields;
}

/** An issued key without its hash. */
export type FeedApiKeyIssued = Omit<ApiKeyIssued, "keyHash">;

/**
 * Each fed event type's `data` in the feed: the catalogue's payload at its current version, but
 * for the two that hold a secret or sealed personal data. The JSON Schemas of the OpenAPI
 * document are generated from this type (scripts/generate-schemas.mjs).
 */
export interface FeedPayloads
  extends Omit<Pick<EventPayloads, FeedEventType>, "ApiKeyIssued" | "ForensicReportReceived"> {
  ApiKeyIssued: FeedApiKeyIssued;
  ForensicReportReceived: FeedForensicReportReceived;
}
