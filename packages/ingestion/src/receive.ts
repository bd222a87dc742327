import type { ParseOptions } from "@dmarc-ledger/dmarc-reports";
import type { EventStore, PostgresEventStore } from "@dmarc-ledger/event-store";
import type { EventMetadata } from "@dmarc-ledger/events";
import type { Kysely } from "kysely";
import {
  type ArchivedInput,
  archiveInput,
  archiveWithOutcome,
  readForArchive,
  recordOutcome,
  statusOf,
} from "./archive.js";
import { CommitGroup } from "./commit-group.js";
import {
  type IngestedItem,
  type IngestOutcome,
  type InputBytes,
  ingest,
  parseInput,
  storeParsed,
} from "./ingest.js";
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
 * Inputs up to this size are parsed before they are archived; larger ones are archived (and
 * committed) first, so that one that takes long to parse, or brings the process down, is kept.
 */
export const parseFirstMaxBytes = 8 * 1024 * 1024;

/**
 * The one way in for every channel. When it returns, the raw input (compressed, by SHA-256) is
 * archived with this receipt and what became of it, and its reports are stored as events, all
 * committed: the channel may acknowledge (SMTP 250, HTTP 202, IMAP move). When it throws, the
 * channel must not acknowledge.
 *
 * The usual input (up to 8 MiB, up to one chunk of rows, events in the same PostgreSQL or PGlite
 * database as the archive) is parsed first and then committed in one transaction: events, archive
 * row and receipt together. Otherwise the input is archived as "received" and committed first,
 * its reports stored next, and the outcome recorded last; an input left "received" by a crash
 * is picked up by `dmarc-ledger reprocess`.
 */
export async function receiveInput(
  deps: IntakeDeps,
  input: InputBytes,
  options: ReceiveOptions,
): Promise<ReceivedInput> {
  const db = deps.db as Kysely<IntakeSchema>;
  const receipt = { channel: options.channel, source: options.source };
  const ingestOptions = {
    source: options.source,
    metadata: options.metadata,
    ...(deps.parseOptions ? { parseOptions: deps.parseOptions } : {}),
  };
  const material = await readForArchive(input, deps.archiveMaxBytes ?? defaultArchiveMaxBytes);
  let archived: ArchivedInput;
  let outcome: IngestOutcome;
  if (material.size <= parseFirstMaxBytes) {
    const parsed = await parseInput(material.parseable, deps.parseOptions);
    const store = transactionalStore(deps);
    if (store && parsed.kind !== "large") {
      ({ archived, outcome } = await commitGroupOf(store, db).commit(async (writer, trx) => {
        const outcome = await storeParsed(writer, material.parseable, parsed, ingestOptions);
        return { outcome, archived: await archiveWithOutcome(trx, material, receipt, outcome.items) };
      }));
      return received(archived, outcome);
    }
    archived = await archiveInput(db, material, receipt);
    outcome = await storeParsed(deps.store, material.parseable, parsed, ingestOptions);
  } else {
    archived = await archiveInput(db, material, receipt);
    outcome = await ingest(deps.store, material.parseable, ingestOptions);
  }
  await recordOutcome(db, archived.sha256, outcome.items);
  return received(archived, outcome);
}

function received(archived: ArchivedInput, outcome: IngestOutcome): ReceivedInput {
  return {
    sha256: archived.sha256,
    size: archived.size,
    archive: archived.archive,
    status: statusOf(outcome.items),
    items: outcome.items,
    lastPosition: outcome.lastPosition,
  };
}

/** One commit group per event store: every channel's inputs commit together. */
const commitGroups = new WeakMap<PostgresEventStore, CommitGroup>();

function commitGroupOf(store: PostgresEventStore, db: Kysely<IntakeSchema>): CommitGroup {
  let group = commitGroups.get(store);
  if (!group) {
    group = new CommitGroup(db, store);
    commitGroups.set(store, group);
  }
  return group;
}

/** The event store, when its events can commit in one transaction with the archive's rows. */
function transactionalStore(deps: IntakeDeps): PostgresEventStore | null {
  const store = deps.store as Partial<PostgresEventStore>;
  return typeof store.holdsEventsIn === "function" && store.holdsEventsIn(deps.db)
    ? (deps.store as PostgresEventStore)
    : null;
}
