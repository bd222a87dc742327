export { type Follower, type FollowOptions, followStore } from "./follow-store.js";
export {
  createKurrentDbEventStore,
  type KurrentDbEventStoreOptions,
} from "./kurrentdb/store.js";
export * from "./port.js";
export { AppendNotFirstError } from "./postgres/append.js";
export { decodeGlobalPosition, encodeGlobalPosition, type GlobalOrderKey } from "./postgres/global-order.js";
export { eventStoreMigrations } from "./postgres/migrations.js";
export {
  createPostgresEventStore,
  openPostgresEventStore,
  type PostgresEventStore,
  type PostgresEventStoreOptions,
} from "./postgres/store.js";
