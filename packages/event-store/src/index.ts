export { backoffDelay, type Follower, type FollowOptions, followStore } from "./follow-store.js";
// The KurrentDB adapter is "@dmarc-ledger/event-store/kurrentdb": its gRPC client takes seconds to
// load, and only a process configured with EVENTSTORE_URL needs it.
export * from "./port.js";
export { AppendNotFirstError, type KnownTransactionState, type NewStreamAppend } from "./postgres/append.js";
export { decodeGlobalPosition, encodeGlobalPosition, type GlobalOrderKey } from "./postgres/global-order.js";
export { eventStoreMigrations } from "./postgres/migrations/index.js";
export {
  type AppendWithinOptions,
  createPostgresEventStore,
  openPostgresEventStore,
  type PostgresEventStore,
  type PostgresEventStoreOptions,
} from "./postgres/store.js";
