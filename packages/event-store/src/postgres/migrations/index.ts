import type { MigrationSet } from "@dmarc-ledger/db";
import { eventsAndStreams } from "./001_events_and_streams.js";
import { streamsWithoutWriter } from "./002_streams_without_writer.js";
import { documentsAsJsonText } from "./003_documents_as_json_text.js";
import { documentsAsTextLz4 } from "./004_documents_as_text_lz4.js";

/** The event store's own tables, migrated with `migrateToLatest(db, eventStoreMigrations)`. */
export const eventStoreMigrations: MigrationSet = {
  name: "event_store",
  migrations: {
    "001_events_and_streams": eventsAndStreams,
    "002_streams_without_writer": streamsWithoutWriter,
    "003_documents_as_json_text": documentsAsJsonText,
    "004_documents_as_text_lz4": documentsAsTextLz4,
  },
};
