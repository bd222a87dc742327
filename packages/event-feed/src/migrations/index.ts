import type { MigrationSet } from "@dmarc-ledger/db";
import { eventFeedMigration } from "./001_event_feed.js";
import { feedPublisherMigration } from "./002_feed_publisher.js";

/** The tables of the events feed (schema.ts), on their own bookkeeping table. */
export const eventFeedMigrations: MigrationSet = {
  name: "event_feed",
  migrations: {
    "001_event_feed": eventFeedMigration,
    "002_feed_publisher": feedPublisherMigration,
  },
};
