import { type Kysely, type RawBuilder, sql, type Transaction } from "kysely";
import { droppedRowsOf } from "./dropped-rows.js";
import type { IngestedItem } from "./ingest.js";
import { bytesInput, type InputBytes } from "./input-bytes.js";
import type { ArchiveStatus, IntakeSchema } from "./schema.js";
import {
  compressedInput,
  hashAndCompress,
  InputTooLargeError,
  isSpooled,
  type SpooledInput,
  sha256Of,
  spool,
} from "./spool.js";

/**
 * An input archived before, received again: counted, its newest outcome kept, except that a
 * duplicate does not hide that it was stored.
 */
/**
 * Bytes that stored their reports stay "stored" when a later copy finds those reports already
 * there, and keep the items that say so: the later copy's "duplicate" items would contradict the
 * row's status (issue 45: rows read "stored" while their reports read "duplicate").
 */
const keptWhenStored = (column: "items" | "rows_dropped" | "dropped") =>
  sql`case when excluded.status = 'duplicate' and raw_input.status = 'stored'
    then ${sql.ref(`raw_input.${column}`)} else ${sql.ref(`excluded.${column}`)} end`;

const receivedAgain = {
  last_seen: sql<Date>`now()`,
  times_received: sql<number>`raw_input.times_received + 1`,
  status: sql<ArchiveStatus>`case when excluded.status = 'duplicate' and raw_input.status = 'stored'
    then 'stored' else excluded.status end`,
  code: sql<string | null>`excluded.code`,
  reason: sql<string | null>`excluded.reason`,
  items: keptWhenStored("items") as RawBuilder<string>,
  rows_dropped: keptWhenStored("rows_dropped") as RawBuilder<number>,
  dropped: keptWhenStored("dropped") as RawBuilder<string>,
  processed_at: sql<Date>`now()`,
};

export interface ArchivedInput {
  sha256: string;
  size: number;
  /** "new": first time these bytes arrived; "seen": the archive had them already. */
  archive: "new" | "seen";
}

/**
 * Stores the raw input (compressed, by SHA-256) and this receipt of it as "received", and
 * commits, before its reports are stored: whatever happens next, the input is not lost. Inputs
 * larger than the archive keeps are recorded by hash, size and outcome only.
 */
/** One arrival of an input: by which channel, from where, and from which tenant (API uploads). */
export interface Receipt {
  channel: string;
  source: string;
  tenantId: string | null;
}

export async function archiveInput(
  db: Kysely<IntakeSchema>,
  material: ArchiveMaterial,
  receipt: Receipt,
): Promise<ArchivedInput> {
  const { sha256, size, kept } = material;
  return db.transaction().execute(async (trx) => {
    // Two channels may receive the same bytes at the same moment: the second insert waits for
    // the first to commit, then inserts nothing and counts a receipt of the row instead.
    const inserted = await trx
      .insertInto("raw_input")
      .values({
        sha256,
        size,
        compression: kept ? "gzip" : null,
        content: kept ? kept.compressed : null,
        channel: receipt.channel,
        source: receipt.source,
        status: "received",
        code: null,
        reason: null,
      })
      .onConflict((oc) => oc.column("sha256").doNothing())
      .returning("sha256")
      .executeTakeFirst();
    if (!inserted) {
      await trx
        .updateTable("raw_input")
        .set({ last_seen: sql<Date>`now()`, times_received: sql<number>`times_received + 1` })
        .where("sha256", "=", sha256)
        .execute();
    }
    await trx
      .insertInto("raw_input_receipt")
      .values({ sha256, channel: receipt.channel, source: receipt.source, tenant_id: receipt.tenantId })
      .execute();
    return { sha256, size, archive: inserted ? "new" : "seen" } satisfies ArchivedInput;
  });
}

/** The input as the archive keeps it: hash, size, and the compressed bytes unless it is too large. */
export interface ArchiveMaterial {
  sha256: string;
  size: number;
  /** null when the input is larger than the archive keeps whole. */
  kept: SpooledInput | null;
  /** What to parse: the kept bytes, held or read back, so the bytes parsed are the bytes kept. */
  parseable: InputBytes;
}

/**
 * The material of an input held in memory, hashed and compressed (hashAndCompress, here or on a
 * parse worker). The held bytes parse without being inflated again; they are what was hashed and kept.
 */
export function heldMaterial(
  bytes: Uint8Array,
  sha256: string,
  compressed: Uint8Array | null,
): ArchiveMaterial {
  const kept = compressed
    ? compressedInput(
        Buffer.from(compressed.buffer, compressed.byteOffset, compressed.byteLength),
        sha256,
        bytes.byteLength,
      )
    : null;
  return { sha256, size: bytes.byteLength, kept, parseable: bytesInput(bytes) };
}

/** Inputs up to this size are read whole and compressed in one step, off the stream machinery. */
const inMemoryMaxBytes = 1024 * 1024;

/** Hashes and compresses the input once, for the archive and for parsing. */
export async function readForArchive(input: InputBytes, keepLimit: number): Promise<ArchiveMaterial> {
  if (isSpooled(input))
    return { sha256: input.sha256, size: input.byteLength, kept: input, parseable: input };
  const size = await input.size();
  if (size <= inMemoryMaxBytes) {
    const bytes = await input.readAll();
    const { sha256, compressed } = hashAndCompress(bytes, keepLimit);
    return heldMaterial(bytes, sha256, compressed);
  }
  try {
    const kept = await spool(input.open(), keepLimit);
    return { sha256: kept.sha256, size: kept.byteLength, kept, parseable: kept };
  } catch (error) {
    if (!(error instanceof InputTooLargeError)) throw error;
    return { sha256: await sha256Of(input), size, kept: null, parseable: input };
  }
}

/**
 * Archives the input and its outcome in the caller's transaction, which also holds the events
 * the input produced: one commit for all of it. A copy already archived counts one more receipt;
 * its status stays "stored" when this copy found duplicates (see recordOutcome).
 */
export async function archiveWithOutcome(
  trx: Transaction<IntakeSchema>,
  material: ArchiveMaterial,
  receipt: Receipt,
  items: readonly IngestedItem[],
): Promise<ArchivedInput> {
  const kept = material.kept;
  // One statement: the row (inserted, or counted again) and this receipt of it.
  const row = await trx
    .with("archived", (db) =>
      db
        .insertInto("raw_input")
        .values({
          sha256: material.sha256,
          size: material.size,
          compression: kept ? "gzip" : null,
          content: kept ? kept.compressed : null,
          channel: receipt.channel,
          source: receipt.source,
          ...outcomeColumns(items),
        })
        .onConflict((oc) => oc.column("sha256").doUpdateSet(receivedAgain))
        // xmax is 0 on a row this statement inserted, and set on one it updated.
        .returning(["sha256", sql<boolean>`xmax = 0`.as("inserted")]),
    )
    .insertInto("raw_input_receipt")
    .columns(["sha256", "channel", "source", "tenant_id"])
    .expression((eb) =>
      eb
        .selectFrom("archived")
        .select([
          "archived.sha256",
          eb.val(receipt.channel).as("channel"),
          eb.val(receipt.source).as("source"),
          eb.val(receipt.tenantId).as("tenant_id"),
        ]),
    )
    .returning(sql<boolean>`(select inserted from archived)`.as("inserted"))
    .executeTakeFirstOrThrow();
  await recordDomains(trx, material.sha256, items);
  return { sha256: material.sha256, size: material.size, archive: row.inserted ? "new" : "seen" };
}

/** The archive row's columns that say what became of the input. */
function outcomeColumns(items: readonly IngestedItem[]) {
  const rejected = items.find((item) => item.kind === "rejected");
  const dropped = droppedRowsOf(items);
  return {
    status: statusOf(items),
    code: rejected?.kind === "rejected" ? rejected.code : null,
    reason: rejected?.kind === "rejected" ? rejected.reason : null,
    items: JSON.stringify(items),
    rows_dropped: dropped.rows,
    dropped: JSON.stringify(dropped.reasons),
    processed_at: sql<Date>`now()`,
  };
}

/** What the input's items say became of it. */
export function statusOf(items: readonly IngestedItem[]): Exclude<ArchiveStatus, "received"> {
  if (items.some((item) => item.kind === "rejected")) return "rejected";
  if (items.some((item) => item.status === "stored" || item.status === "resumed")) return "stored";
  return "duplicate";
}

/** The domains the input's reports name, for the tenants that have them (raw_input_domain). */
async function recordDomains(
  db: Kysely<IntakeSchema>,
  sha256: string,
  items: readonly IngestedItem[],
): Promise<void> {
  const domains = domainsOf(items);
  if (domains.size === 0) return;
  await db
    .insertInto("raw_input_domain")
    .values([...domains].map((domain) => ({ domain, sha256 })))
    .onConflict((oc) => oc.columns(["domain", "sha256"]).doNothing())
    .execute();
}

/** Records the outcome of processing an archived input. */
export async function recordOutcome(
  db: Kysely<IntakeSchema>,
  sha256: string,
  items: readonly IngestedItem[],
): Promise<void> {
  const outcome = outcomeColumns(items);
  await db
    .updateTable("raw_input")
    .set({
      ...outcome,
      // Bytes whose reports were stored by an earlier (or concurrent) receipt stay "stored": a
      // later copy finds duplicates, but the input itself is what put them there. Decided in the
      // statement, so that two receipts finishing together cannot undo it.
      status:
        outcome.status === "duplicate"
          ? sql<ArchiveStatus>`case when status = 'stored' then 'stored' else 'duplicate' end`
          : outcome.status,
      // And keep the items that say it stored them (receivedAgain).
      ...(outcome.status === "duplicate"
        ? {
            items: sql<string>`case when status = 'stored' then items else ${outcome.items} end`,
            rows_dropped: sql<number>`case when status = 'stored' then rows_dropped else ${outcome.rows_dropped} end`,
            dropped: sql<string>`case when status = 'stored' then dropped else ${outcome.dropped} end`,
          }
        : {}),
    })
    .where("sha256", "=", sha256)
    .execute();
  await recordDomains(db, sha256, items);
}

/** One input of a group commit, to archive with its outcome (archiveManyWithOutcome). */
export interface ArchiveEntry {
  material: ArchiveMaterial;
  receipt: Receipt;
  items: readonly IngestedItem[];
}

/**
 * archiveWithOutcome for several inputs of one transaction in two statements, not two each: the
 * rows (inserted, or counted again), then every receipt and every domain. The inputs' SHA-256s
 * must be distinct (one statement cannot insert and then count the same row).
 */
export async function archiveManyWithOutcome(
  trx: Transaction<IntakeSchema>,
  entries: readonly ArchiveEntry[],
): Promise<ArchivedInput[]> {
  if (entries.length === 0) return [];
  if (entries.length === 1) {
    const [entry] = entries;
    return [await archiveWithOutcome(trx, entry!.material, entry!.receipt, entry!.items)];
  }
  if (new Set(entries.map((entry) => entry.material.sha256)).size !== entries.length)
    throw new Error("archiveManyWithOutcome: the inputs must be distinct");
  const archived = await trx
    .insertInto("raw_input")
    .values(
      entries.map(({ material, receipt, items }) => ({
        sha256: material.sha256,
        size: material.size,
        compression: material.kept ? "gzip" : null,
        content: material.kept ? material.kept.compressed : null,
        channel: receipt.channel,
        source: receipt.source,
        ...outcomeColumns(items),
      })),
    )
    .onConflict((oc) => oc.column("sha256").doUpdateSet(receivedAgain))
    .returning(["sha256", sql<boolean>`xmax = 0`.as("inserted")])
    .execute();
  const inserted = new Map(archived.map((row) => [row.sha256, row.inserted]));
  const receipts = entries.map(({ material, receipt }) => ({
    sha256: material.sha256,
    channel: receipt.channel,
    source: receipt.source,
    tenant_id: receipt.tenantId,
  }));
  const domains = entries.flatMap(({ material, items }) =>
    [...domainsOf(items)].map((domain) => ({ domain, sha256: material.sha256 })),
  );
  if (domains.length === 0) await trx.insertInto("raw_input_receipt").values(receipts).execute();
  else
    await trx
      .with("receipts", (db) => db.insertInto("raw_input_receipt").values(receipts))
      .insertInto("raw_input_domain")
      .values(domains)
      .onConflict((oc) => oc.columns(["domain", "sha256"]).doNothing())
      .execute();
  return entries.map(({ material }) => ({
    sha256: material.sha256,
    size: material.size,
    archive: inserted.get(material.sha256) ? "new" : "seen",
  }));
}

function domainsOf(items: readonly IngestedItem[]): Set<string> {
  const domains = new Set<string>();
  for (const item of items) {
    if (item.kind === "tls") for (const domain of item.domains) domains.add(domain);
    else if (item.kind === "rejected") {
      if (item.domain) domains.add(item.domain);
    } else if (item.domain !== "") domains.add(item.domain.toLowerCase());
  }
  return domains;
}
