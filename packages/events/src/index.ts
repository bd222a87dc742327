export type { EventMetadata } from "@dmarc-ledger/event-store";
export * from "./catalogue.js";
export { type DomainEvent, decodeEvent, newEvent } from "./codec.js";
export { type StreamCategory, sha256Hex, streamCategory, streams } from "./streams.js";
export { UnknownSchemaVersionError, upcast } from "./upcasters.js";
