import type { EventMetadata } from "@dmarc-ledger/events";
import type { Kysely } from "kysely";
import { recordOutcome, statusOf } from "./archive.js";
import { type IngestedItem, ingest } from "./ingest.js";
import type { IntakeDeps } from "./receive-input.js";
import type { ArchiveStatus, IntakeSchema } from "./schema.js";
import { compressedInput } from "./spool.js";

export interface ReprocessedInput {
  sha256: string;
  source: string;
  before: { status: ArchiveStatus; code: string | null; reason: string | null };
  /** null when the archive did not keep the bytes (larger than ARCHIVE_MAX_BYTES). */
  after: { status: ArchiveStatus; items: IngestedItem[] } | null;
}

/** The statuses worth another try: rejected, or archived and never processed (a crash). */
const reprocessable: ArchiveStatus[] = ["rejected", "received"];

/**
 * Runs the archived inputs that were rejected (or archived and never processed, after a crash)
 * through the parser again, e.g. after a parser fix: what parses now is stored, the rest stays
 * with its reason updated. `since` limits it to inputs last received at or after that time.
 */
export async function* reprocessArchived(
  deps: IntakeDeps,
  options: { since?: Date; metadata: EventMetadata },
): AsyncGenerator<ReprocessedInput> {
  const db = deps.db as Kysely<IntakeSchema>;
  let query = db
    .selectFrom("raw_input")
    .select(["sha256", "source", "status", "code", "reason"])
    .where("status", "in", reprocessable)
    .orderBy("first_seen")
    .orderBy("sha256");
  if (options.since) query = query.where("last_seen", ">=", options.since);
  // The list is read first (hashes and reasons only); each input's bytes are read one at a time.
  const candidates = await query.execute();
  for (const candidate of candidates) yield await reprocessOne(deps, candidate, options.metadata);
}

/**
 * Runs one archived input through the parser again; null when there is no such input, or it is
 * not one to reprocess (it was stored, or found to be duplicates).
 */
export async function reprocessInput(
  deps: IntakeDeps,
  sha256: string,
  metadata: EventMetadata,
): Promise<ReprocessedInput | null> {
  const db = deps.db as Kysely<IntakeSchema>;
  const candidate = await db
    .selectFrom("raw_input")
    .select(["sha256", "source", "status", "code", "reason"])
    .where("sha256", "=", sha256)
    .where("status", "in", reprocessable)
    .executeTakeFirst();
  return candidate ? reprocessOne(deps, candidate, metadata) : null;
}

async function reprocessOne(
  deps: IntakeDeps,
  candidate: {
    sha256: string;
    source: string;
    status: ArchiveStatus;
    code: string | null;
    reason: string | null;
  },
  metadata: EventMetadata,
): Promise<ReprocessedInput> {
  const db = deps.db as Kysely<IntakeSchema>;
  const before = { status: candidate.status, code: candidate.code, reason: candidate.reason };
  const row = await db
    .selectFrom("raw_input")
    .select(["content", "size"])
    .where("sha256", "=", candidate.sha256)
    .executeTakeFirstOrThrow();
  if (row.content === null)
    return { sha256: candidate.sha256, source: candidate.source, before, after: null };
  const input = compressedInput(Buffer.from(row.content), candidate.sha256, Number(row.size));
  const outcome = await ingest(deps.store, input, {
    source: candidate.source,
    metadata,
    ...(deps.parseOptions ? { parseOptions: deps.parseOptions } : {}),
  });
  await recordOutcome(db, candidate.sha256, outcome.items);
  return {
    sha256: candidate.sha256,
    source: candidate.source,
    before,
    after: { status: statusOf(outcome.items), items: outcome.items },
  };
}
