import type { DroppedRows, ParseOptions } from "@dmarc-ledger/dmarc-reports";
import type { EventStore, PostgresEventStore } from "@dmarc-ledger/event-store";
import type { EventMetadata } from "@dmarc-ledger/events";
import type { DataKeys } from "@dmarc-ledger/personal-data";
import type { Kysely } from "kysely";
import {
  type ArchivedInput,
  type ArchiveMaterial,
  archiveInput,
  heldMaterial,
  readForArchive,
  recordOutcome,
  statusOf,
} from "./archive.js";
import { CommitGroup } from "./commit-group.js";
import { droppedRowsOf } from "./dropped-rows.js";
import { defaultHoldBudgetBytes, HoldBudget } from "./hold-budget.js";
import { type IngestedItem, type IngestOutcome, ingest, storeParsed } from "./ingest.js";
import { bytesInput, type InputBytes } from "./input-bytes.js";
import type { IntakeMetrics } from "./intake-metrics.js";
import { holdMaxBytes, type ParsedInput, parseInput } from "./parse-input.js";
import { ParseWorkerFailedError, parsePool } from "./parse-pool.js";
import { keySealer, presealed } from "./personal-sealer.js";
import { prepareInput } from "./prepare.js";
import { prepareHere } from "./prepare-here.js";
import type { ArchiveStatus, IntakeSchema } from "./schema.js";
import { defaultParseThreads } from "./settings.js";
import { isSpooled } from "./spool.js";

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
  /** Rows held in memory after the one parse (see holdMaxBytes); smaller in tests. */
  holdMaxBytes?: number;
  /** Parse worker threads (see parse-pool.ts); 0 parses on the calling thread. Default: cores - 1, at least 1. */
  parseThreads?: number;
  /** Counts each input by channel and outcome, and the rows it dropped, where the process serves metrics. */
  metrics?: Pick<IntakeMetrics, "inputs" | "rowsDropped">;
  /**
   * Seal personal data under these keys (docs/privacy.md). Every process of the service passes
   * them; without, personal fields are stored in clear (tests of other parts, bench baselines).
   */
  dataKeys?: DataKeys;
}

export interface ReceiveOptions {
  /** The channel: "upload", "import", "smtp", "imap", "reprocess". */
  channel: string;
  /** Where exactly: "import:<file>", "upload:<request id>", "smtp:<message id>". */
  source: string;
  /** The tenant that sent it (API uploads): theirs to see even when no report names their domains. */
  tenantId?: string;
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
  /** The rows its reports left out, in all and by reason (also on the archive's row). */
  dropped: { rows: number; reasons: DroppedRows[] };
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
 * The usual input (up to 8 MiB, rows up to holdMaxBytes, events in the same PostgreSQL or PGlite
 * database as the archive) is parsed once and then committed in one transaction: events (every
 * chunk of its reports), archive row and receipt together. Otherwise the input is archived as "received" and committed first,
 * its reports stored next, and the outcome recorded last; an input left "received" by a crash
 * is picked up by `dmarc-ledger reprocess`.
 */
export async function receiveInput(
  deps: IntakeDeps,
  input: InputBytes,
  options: ReceiveOptions,
): Promise<ReceivedInput> {
  const counted = deps.metrics?.inputs;
  let result: ReceivedInput;
  try {
    result = await receiveUncounted(deps, input, options);
  } catch (error) {
    counted?.inc({ channel: options.channel, status: "failed" });
    throw error;
  }
  counted?.inc({ channel: options.channel, status: result.status });
  const droppedCounter = deps.metrics?.rowsDropped;
  if (droppedCounter) {
    for (const item of result.items) {
      if (item.kind !== "aggregate" || item.status === "duplicate") continue;
      for (const { reason, rows } of item.dropped)
        droppedCounter.inc({ channel: options.channel, reason }, rows);
    }
  }
  return result;
}

async function receiveUncounted(
  deps: IntakeDeps,
  input: InputBytes,
  options: ReceiveOptions,
): Promise<ReceivedInput> {
  const db = deps.db as Kysely<IntakeSchema>;
  const receipt = { channel: options.channel, source: options.source, tenantId: options.tenantId ?? null };
  const ingestOptions = {
    source: options.source,
    metadata: options.metadata,
    ...(deps.parseOptions ? { parseOptions: deps.parseOptions } : {}),
    ...(deps.holdMaxBytes !== undefined ? { holdMaxBytes: deps.holdMaxBytes } : {}),
  };
  const budget = holdBudgetOf(deps.store);
  const { material, parsed } = await readAndParse(deps, input, budget);
  const keys = deps.dataKeys;
  const sealedAt = new Date();
  const uploader = options.tenantId ?? null;
  // Outside a transaction of ours: its seals may make their keys.
  const withSealer = keys
    ? { ...ingestOptions, sealer: keySealer(keys, db, uploader, sealedAt) }
    : ingestOptions;
  let archived: ArchivedInput;
  let outcome: IngestOutcome;
  if (parsed) {
    try {
      const store = transactionalStore(deps);
      if (store && parsed.kind !== "large") {
        // Sealed before the group's transaction: it holds the append lock for every input in it.
        const sealerIn = keys
          ? await presealed(keys, db, parsed, material.parseable, uploader, sealedAt)
          : undefined;
        ({ archived, outcome } = await commitGroupOf(store, db).commit(async (writer, trx, archive) => {
          const sealer = sealerIn?.(trx);
          const outcome = await storeParsed(writer, material.parseable, parsed, { ...ingestOptions, sealer });
          return { outcome, archived: await archive({ material, receipt, items: outcome.items }) };
        }));
        return received(archived, outcome);
      }
      archived = await archiveInput(db, material, receipt);
      outcome = await storeParsed(deps.store, material.parseable, parsed, withSealer);
    } finally {
      if (parsed.kind === "held") budget.give(parsed.bytes);
    }
  } else {
    archived = await archiveInput(db, material, receipt);
    outcome = await ingest(deps.store, material.parseable, withSealer);
  }
  await recordOutcome(db, archived.sha256, outcome.items);
  return received(archived, outcome);
}

/**
 * Hashes and compresses the input for the archive and, up to parseFirstMaxBytes, parses it (null
 * above: it is parsed while it is stored). On a parse worker when there are any, else here.
 */
async function readAndParse(
  deps: IntakeDeps,
  input: InputBytes,
  budget: HoldBudget,
): Promise<{ material: ArchiveMaterial; parsed: ParsedInput | null }> {
  const keepLimit = deps.archiveMaxBytes ?? defaultArchiveMaxBytes;
  const threads = deps.parseThreads ?? defaultParseThreads;
  let unread = input;
  if (threads > 0 && !isSpooled(input) && (await input.size()) <= parseFirstMaxBytes) {
    const bytes = await input.readAll();
    const request = {
      bytes,
      keepLimit,
      parseOptions: deps.parseOptions,
      maxHeldBytes: deps.holdMaxBytes ?? holdMaxBytes,
    };
    try {
      // A small input here (bounded, see prepare-here.ts); the rest on a worker, or here while
      // no worker is ready yet (they are loading the parser).
      const { sha256, compressed, parsed } =
        (await prepareHere(request)) ??
        (await (parsePool(threads).prepare(request) ?? prepareInput(request)));
      const material = heldMaterial(bytes, sha256, compressed);
      // Held rows count against the process's budget from here; past it, the input is read again while stored.
      const held = parsed.kind !== "held" || budget.take(parsed.bytes);
      return { material, parsed: held ? parsed : { kind: "large" } };
    } catch (error) {
      // A worker that failed (not an input that failed to parse): this thread does it instead,
      // from the bytes already read.
      if (!(error instanceof ParseWorkerFailedError)) throw error;
      unread = bytesInput(bytes);
    }
  }
  const material = await readForArchive(unread, keepLimit);
  if (material.size > parseFirstMaxBytes) return { material, parsed: null };
  return {
    material,
    parsed: await parseInput(material.parseable, deps.parseOptions, deps.holdMaxBytes, budget),
  };
}

function received(archived: ArchivedInput, outcome: IngestOutcome): ReceivedInput {
  return {
    sha256: archived.sha256,
    size: archived.size,
    archive: archived.archive,
    status: statusOf(outcome.items),
    items: outcome.items,
    dropped: droppedRowsOf(outcome.items),
    lastPosition: outcome.lastPosition,
  };
}

/** One budget per event store, as for commit groups: every channel's inputs share it. */
const holdBudgets = new WeakMap<EventStore, HoldBudget>();

function holdBudgetOf(store: EventStore): HoldBudget {
  let budget = holdBudgets.get(store);
  if (!budget) {
    budget = new HoldBudget(defaultHoldBudgetBytes);
    holdBudgets.set(store, budget);
  }
  return budget;
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
