export { type FeedEvent, type RenderOptions, toFeedEvents } from "./cloud-event.js";
export { decodeCursor, encodeCursor, InvalidCursorError } from "./cursor.js";
export { eventDataSchemas } from "./event-data-schemas.js";
export type { FeedEventType, FeedPayloads, ShownForensicFields } from "./feed-payloads.js";
export { unfedTypes } from "./membership.js";
export { eventFeedMigrations } from "./migrations/index.js";
export { fedTypes, feedEventComponents } from "./openapi-schemas.js";
export { eventFeedProjection } from "./projection.js";
export { type FeedRequest, feedPositions, maxPageBytes, readFeedEvents } from "./read-feed.js";
export type { EventFeedSchema } from "./schema.js";
export {
  type EventBrokerSettings,
  eventBrokerSettingsFromEnv,
  eventBrokerSettingsShape,
} from "./settings.js";
