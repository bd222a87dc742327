import type { ParseOptions } from "@dmarc-ledger/dmarc-reports";
import type { EventStore } from "@dmarc-ledger/event-store";
import type { EventMetadata } from "@dmarc-ledger/events";
import type { Kysely } from "kysely";
import { archiveInput, recordOutcome, statusOf } from "./archive.js";
import { type IngestedItem, type InputBytes, ingest } from "./ingest.js";
import type { ArchiveStatus, IntakeSchema } from "./schema.js";

/** What every channel needs to receive input: the event store and the database holding the archive. */
export interface IntakeDeps {
  store: EventStore;
  /**
   * The database the archive lives in (the read models' database: PGlite or DATABASE_URL). Typed
   * loosely because callers hold it typed for their own tables; the intake uses only its own.
   */
  // biome-ignore lint/suspicious/noExplicitAny: see above
  db: Kysely<any>;
  /** Inputs above this are archived by hash, size and outcome only. Default 256 MiB. */
  archiveMaxBytes?: number;
  /** Parser limits; the defaults of packages/dmarc-reports otherwise. */
  parseOptions?: ParseOptions;
}

export interface ReceiveOptions {
  /** The channel: "upload", "import", "smtp", "imap", "reprocess". */
  channel: string;
  /** Where exactly: "import:<file>", "upload:<request id>", "smtp:<message id>". */
  source: string;
  metadata: EventMetadata;
}

export interface ReceivedInput {
  sha256: string;
  size: number;
  /** "new" the first time these exact bytes arrived, "seen" after. */
  archive: "new" | "seen";
  /**
   * What this receipt did: stored (a report new to the service), duplicate (nothing new) or
   * rejected (kept with the reason). The archive's row keeps "stored" for bytes that once were.
   */
  status: Exclude<ArchiveStatus, "received">;
  items: IngestedItem[];
  /** The global position of the last event this input appended, for read-your-writes. */
  lastPosition: bigint | null;
}

export const defaultArchiveMaxBytes = 256 * 1024 * 1024;

/**
 * The one way in for every channel: archives the raw input durably (compressed, by SHA-256,
 * with this receipt), then parses it and appends its reports as events, then records the
 * outcome in the archive. When it returns, everything is committed and the channel may
 * acknowledge (SMTP 250, HTTP 202, IMAP flag). When it throws, the channel must not acknowledge;
 * the archive may hold the input as "received", which `dmarc-ledger reprocess` picks up.
 */
export async function receiveInput(
  deps: IntakeDeps,
  input: InputBytes,
  options: ReceiveOptions,
): Promise<ReceivedInput> {
  const db = deps.db as Kysely<IntakeSchema>;
  const { archived, spooled } = await archiveInput(
    db,
    input,
    { channel: options.channel, source: options.source },
    deps.archiveMaxBytes ?? defaultArchiveMaxBytes,
  );
  // Parse from the archived copy when there is one: the bytes parsed are the bytes kept.
  const outcome = await ingest(deps.store, spooled ?? input, {
    source: options.source,
    metadata: options.metadata,
    ...(deps.parseOptions ? { parseOptions: deps.parseOptions } : {}),
  });
  await recordOutcome(db, archived.sha256, outcome.items);
  return {
    sha256: archived.sha256,
    size: archived.size,
    archive: archived.archive,
    status: statusOf(outcome.items),
    items: outcome.items,
    lastPosition: outcome.lastPosition,
  };
}
